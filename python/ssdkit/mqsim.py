"""MQSim's ssdconfig.xml and workload.xml as ssdkit configurations.

``import_mqsim(ssdconfig, workload)`` converts ``<Execution_Parameter_Set>`` to the device
sections and each ``<IO_Scenario>`` to the ``[[flow]]`` tables of one configuration (MQSim runs
every scenario separately on a fresh device). Semantics follow MQSim @ 7ec40e3 as described in
the reference PARAMETERS.md: a tag that is absent takes MQSim's built-in default, flows of a
scenario split the logical space equally, ``Stop_Time`` wins over ``Total_Requests_To_Generate``.

Every parameter ssdkit cannot reproduce is listed, never dropped silently: as
``unmapped: <XML path> = <value>: <reason>`` (no equivalent) or ``approximated: ...`` (converted
to the nearest ssdkit setting) lines, grouped by cause (:data:`CAUSES`: not modelled, a value
ssdkit cannot take, approximated, random seeds, output options, no effect in MQSim either) with
the causes that change results first, at the top of the TOML and in
:attr:`MqsimScenario.unmapped` in that order (the CLI prints them as one warning block on
stderr; :func:`warning_lines` gives the block with a heading per cause). Tags MQSim does not know, which it silently
ignores, are listed too. Malformed files, wrong root tags, non-numeric values and unknown enum
values raise :class:`MqsimError` naming the file, the element path and the allowed values.
docs/mqsim.md has the mapping table.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from pyexpat import ErrorString, ExpatError, ParserCreate

from . import _mqsim_random, _native, api
from ._native import ConfigError
from ._record import field, record
from ._tomltext import apply_override_list, device_capacity, override_list, toml_dumps

__all__ = [
    "CAUSES",
    "MQSIM_COMPAT",
    "MqsimError",
    "MqsimScenario",
    "Unmapped",
    "compat_lines",
    "group_by_cause",
    "import_mqsim",
    "mqsim_to_toml",
    "warning_lines",
]

# Not typing.TYPE_CHECKING: importing `typing` is 3 ms of a command line run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Union

    PathArg = Union[str, "os.PathLike[str]"]

SECTOR = 512
EXEC_ROOT = "Execution_Parameter_Set"
WORKLOAD_ROOT = "MQSim_IO_Scenarios"


class MqsimError(ConfigError):
    """An MQSim input file that cannot be read or converted."""


#: Why a parameter is not reproduced exactly, most consequential first: the first three change
#: what is simulated (a mechanism ssdkit lacks changes every request it would touch, such as
#: MQSim's write cache absorbing writes; a value ssdkit cannot take is replaced by another; a
#: nearest setting differs in detail), the others cannot change the results.
CAUSES: dict[str, str] = {
    "not_modelled": "not modelled by ssdkit (MQSim simulates it; results can differ)",
    "value_changed": "value ssdkit cannot take (another value is simulated; results can differ)",
    "approximated": "approximated (converted to the nearest ssdkit setting; results can differ in detail)",
    "random_seed": "random seeds (the same distributions, other random draws)",
    "output_only": "output options (no effect on what is simulated)",
    "no_effect": "no effect in MQSim either (unknown, unused or inapplicable there; nothing changes)",
}


@record
class Unmapped:
    """One MQSim parameter ssdkit does not reproduce exactly."""

    path: str  # XML element path, e.g. Execution_Parameter_Set/Device_Parameter_Set/Seed
    value: str
    reason: str
    kind: str = "unmapped"  # "unmapped": no equivalent; "approximated": converted to the nearest
    cause: str = "not_modelled"  # a key of CAUSES: why, and how much it matters

    def line(self) -> str:
        return f"{self.kind}: {self.path} = {self.value}: {self.reason}"


def group_by_cause(entries: Sequence[Unmapped]) -> list[tuple[str, list[Unmapped]]]:
    """``(cause, entries)`` pairs in the order of :data:`CAUSES` (most consequential first),
    only causes that occur; within a cause, the entries' order; an entry whose line repeats an
    earlier one (the device's parameters, listed once per scenario) is left out."""
    seen: set[str] = set()
    groups: dict[str, list[Unmapped]] = {c: [] for c in CAUSES}
    for e in entries:
        if e.line() not in seen:
            seen.add(e.line())
            groups[e.cause].append(e)
    return [(c, es) for c, es in groups.items() if es]


def warning_lines(entries: Sequence[Unmapped]) -> list[str]:
    """The listed parameters grouped by cause, most consequential first: per cause a heading
    with its count, then its entries indented by two spaces (the CLI indents the block)."""
    out = []
    for cause, es in group_by_cause(entries):
        out.append(f"{CAUSES[cause]}: {len(es)}")
        out += [f"  {e.line()}" for e in es]
    return out


@record
class MqsimScenario:
    """One converted configuration: scenario ``index`` (1-based, as MQSim numbers its output
    files; 0 when only the device was converted)."""

    index: int
    toml: str
    doc: dict
    unmapped: list[Unmapped]
    capacity_bytes: int
    sources: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Reading


def _read_xml(src: PathArg, root_tag: str, what: str) -> tuple[_Element, str, str | None]:
    """(root element, file label, folder of the file or None for text)."""
    if isinstance(src, str) and src.lstrip().startswith("<"):
        api._check_utf8(src, f"{what} text", MqsimError)
        text, label, folder = src, f"<{what}>", None
    else:
        path = api._path(src, what, MqsimError)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise MqsimError(f"cannot read {what} `{path}`: no such file") from None
        except OSError as e:
            raise MqsimError(f"cannot read {what} `{path}`: {e.strerror or e}") from None
        text, label, folder = data, path, os.path.dirname(os.path.abspath(path))
    root = _parse_xml(text, label)
    if root.tag != root_tag:
        raise MqsimError(f"{label}: root element is <{root.tag}>; an MQSim {what} has <{root_tag}>")
    return root, label, folder


class _Element:
    """An XML element as the converter reads it: its tag (``{uri}local`` in a namespace, as
    ElementTree writes it), the text before its first child (ElementTree's ``text``), its child
    elements. Attributes, comments and processing instructions are not kept: MQSim reads none
    of them."""

    __slots__ = ("children", "tag", "text")

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.text: str | None = None
        self.children: list[_Element] = []

    def __iter__(self) -> Iterator[_Element]:
        return iter(self.children)


class _UndefinedEntity(Exception):
    """Raised inside expat's handler for an entity it left unexpanded (`_parse_xml`), with
    where it stands: (line, 0-based column, the reference)."""


def _parse_xml(text: str | bytes, label: str) -> _Element:
    """Parses incrementally with expat (ElementTree's parser, without the tree module, whose
    import was a tenth of a run's start-up), keeping the path of the open elements, so a
    syntax error names the element it broke (``file:line:column: ... inside <A/B>``), not only
    a position."""
    # Namespaces processed as ElementTree processes them: a tag in one reads `{uri}local`, and
    # an unbound prefix is an error.
    parser = ParserCreate(None, "}")
    parser.buffer_text = True
    stack: list[_Element] = []
    root: _Element | None = None
    # Text arrives in pieces (buffered, but split at entities and feed boundaries); only the
    # text before an element's first child is its `text`.
    pieces: list[str] = []

    def flush() -> None:
        if pieces and stack and not stack[-1].children:
            stack[-1].text = (stack[-1].text or "") + "".join(pieces)
        pieces.clear()

    def start(tag: str, _attrs: dict) -> None:
        nonlocal root
        flush()
        el = _Element("{" + tag if "}" in tag else tag)
        if stack:
            stack[-1].children.append(el)
        else:
            root = el
        stack.append(el)

    def end(_tag: str) -> None:
        flush()
        stack.pop()

    def unexpanded(data: str) -> None:
        # An entity expat could not expand (one an external DTD would declare) reaches the
        # default handler as its reference: an error, as ElementTree makes it, not a value
        # read without it.
        if data.startswith("&"):
            raise _UndefinedEntity(parser.CurrentLineNumber, parser.CurrentColumnNumber, data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = pieces.append
    parser.DefaultHandlerExpand = unexpanded
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        for i in range(0, len(data), 4096):
            parser.Parse(data[i : i + 4096], False)
        parser.Parse(b"", True)
    except (ExpatError, _UndefinedEntity) as e:
        if isinstance(e, ExpatError):
            line, col, msg = e.lineno, e.offset, ErrorString(e.code)
        else:
            line, col, ref = e.args
            msg = f"undefined entity {ref}"
        where = f" inside <{'/'.join(el.tag for el in stack)}>" if stack else " before the root element"
        raise MqsimError(
            f"{label}:{line}:{col + 1}: malformed XML at line {line}, column {col + 1}{where}: {msg}"
        ) from None
    assert root is not None  # the final Parse raises "no element found" otherwise
    return root


class _Section:
    """The parameters of one XML element: child tag -> (text, path). Repeated tags keep the
    last (as MQSim's loop does) and the earlier ones are listed."""

    def __init__(self, conv: _Conv, elem: _Element, path: str, known: Sequence[str], nested: Sequence[str] = ()):
        self.conv, self.path = conv, path
        self.vals: dict[str, tuple[str, str]] = {}
        self.children: dict[str, list[tuple[_Element, str]]] = {}
        counts: dict[str, int] = {}
        for child in elem:
            counts[child.tag] = counts.get(child.tag, 0) + 1
            cpath = f"{path}/{child.tag}"
            if child.tag in nested:
                self.children.setdefault(child.tag, []).append((child, cpath))
                continue
            text = (child.text or "").strip()
            if child.tag not in known:
                conv.unmapped(cpath, text, _unknown_reason(child.tag, known), cause="no_effect")
                continue
            if child.tag in self.vals:
                conv.unmapped(cpath, self.vals[child.tag][0], "repeated; MQSim keeps the last value", cause="no_effect")
            self.vals[child.tag] = (text, cpath)

    def get(self, tag: str, default: str | None) -> tuple[str | None, str, bool]:
        """(text, path, present); absent tags take MQSim's built-in default."""
        if tag in self.vals:
            text, path = self.vals[tag]
            return text, path, True
        return default, f"{self.path}/{tag}", False


def _unknown_reason(tag: str, known: Sequence[str]) -> str:
    special = {
        "Preferred_suspend_erase_time_for_read": "MQSim's parser reads `Prefered_suspend_erase_time_for_read` "
        "(one r), so this tag is ignored",
        "GC_Exect_Threshold": "MQSim's parser reads `GC_Exec_Threshold`, so this tag is ignored",
        "Intensity": "not read by MQSim @7ec40e3 (its BANDWIDTH generator reads <Bandwidth>; newer MQSim uses "
        "<Intensity> only for ARRIVAL_RATE flows)",
    }
    if tag in special:
        return special[tag]
    close = [k for k in known if k.lower() == tag.lower() or k.replace("_", "").lower() == tag.replace("_", "").lower()]
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown tag: MQSim silently ignores it{hint}"


# ---------------------------------------------------------------------------------------------
# Values


class _Conv:
    def __init__(self, label: str):
        self.label = label  # file label for errors
        self.entries: list[Unmapped] = []
        self.sources: dict[str, str] = {}

    def unmapped(
        self, path: str, value: Any, reason: str, *, cause: str, present: bool = True, kind: str = "unmapped"
    ) -> None:
        assert cause in CAUSES, cause
        shown = str(value) if present else f"{value} (tag absent: MQSim's built-in default)"
        self.entries.append(Unmapped(path, shown, reason, kind, cause))

    def approx(self, path: str, value: Any, reason: str, *, present: bool = True, cause: str = "approximated") -> None:
        self.unmapped(path, value, reason, present=present, kind="approximated", cause=cause)

    def err(self, path: str, text: Any, allowed: str) -> MqsimError:
        return MqsimError(f"{self.label}: <{path}>: `{text}` is not valid; allowed: {allowed}")

    def int(self, p: tuple, lo: int | None = None, hi: int | None = None) -> int:
        text, path, _ = p
        if text is None:
            raise MqsimError(f"{self.label}: <{path}> is missing (MQSim leaves it uninitialised)")
        allowed = f"an integer{_range(lo, hi)}"
        if not re.fullmatch(r"[+-]?\d+", text or ""):
            raise self.err(path, text, allowed)
        v = int(text)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.err(path, text, allowed)
        return v

    def float(self, p: tuple, lo: float | None = None, hi: float | None = None, why: str = "") -> float:
        text, path, _ = p
        if text is None:
            raise MqsimError(f"{self.label}: <{path}> is missing (MQSim leaves it uninitialised)")
        allowed = f"a number{_range(lo, hi)}{why}"
        try:
            v = float(text)
        except ValueError:
            raise self.err(path, text, allowed) from None
        if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
            raise self.err(path, text, allowed)
        return v

    def enum(self, p: tuple, allowed: Sequence[str]) -> str:
        text, path, _ = p
        if text is None:
            raise MqsimError(f"{self.label}: <{path}> is missing (MQSim leaves it uninitialised)")
        v = text.upper()  # MQSim upper-cases enum values
        if v not in allowed:
            raise self.err(path, text, ", ".join(allowed))
        return v

    def bool(self, p: tuple) -> bool:
        # MQSim takes anything but "false" as true; a typo there would silently mean true, so
        # only true/false are accepted here.
        return self.enum(p, ("TRUE", "FALSE")) == "TRUE"

    def src(self, key: str, p: tuple) -> None:
        text, path, present = p
        self.sources[key] = f"<{path}> = {text}" + ("" if present else " (MQSim's built-in default)")


def _range(lo: Any, hi: Any) -> str:
    if lo is not None and hi is not None:
        return f" in {lo}..{hi}"
    if lo is not None:
        return f" >= {lo}"
    if hi is not None:
        return f" <= {hi}"
    return ""


# ---------------------------------------------------------------------------------------------
# Device (ssdconfig.xml)

_HOST_TAGS = {
    "PCIe_Lane_Bandwidth": "0.4",
    "PCIe_Lane_Count": "4",
    "SATA_Processing_Delay": "0",
    "Enable_ResponseTime_Logging": "false",
    "ResponseTime_Logging_Period_Length": "400000",
}
_DEVICE_TAGS = {
    "Seed": "123",
    "Enabled_Preconditioning": "true",
    "Memory_Type": "FLASH",
    "HostInterface_Type": "NVME",
    "IO_Queue_Depth": "1024",
    "Queue_Fetch_Size": "512",
    "Caching_Mechanism": "ADVANCED",
    "Data_Cache_Sharing_Mode": "SHARED",
    "Data_Cache_Capacity": "536870912",
    "Data_Cache_DRAM_Row_Size": "8192",
    "Data_Cache_DRAM_Data_Rate": "800",
    "Data_Cache_DRAM_Data_Busrt_Size": "4",
    "Data_Cache_DRAM_tRCD": "13",
    "Data_Cache_DRAM_tCL": "13",
    "Data_Cache_DRAM_tRP": "13",
    "Address_Mapping": "PAGE_LEVEL",
    "Ideal_Mapping_Table": "false",
    "CMT_Capacity": "2097152",
    "CMT_Sharing_Mode": "SHARED",
    "Plane_Allocation_Scheme": "CWDP",
    "Transaction_Scheduling_Policy": "OUT_OF_ORDER",
    "Overprovisioning_Ratio": "0.07",
    "GC_Exec_Threshold": "0.05",
    "GC_Block_Selection_Policy": "RGA",
    "Use_Copyback_for_GC": "false",
    "Preemptible_GC_Enabled": "true",
    "GC_Hard_Threshold": "0.005",
    "Dynamic_Wearleveling_Enabled": "true",
    "Static_Wearleveling_Enabled": "true",
    "Static_Wearleveling_Threshold": "100",
    "Prefered_suspend_erase_time_for_read": "700000",
    "Preferred_suspend_erase_time_for_write": "700000",
    "Preferred_suspend_write_time_for_read": "100000",
    "Flash_Channel_Count": "8",
    "Flash_Channel_Width": "1",
    "Channel_Transfer_Rate": "300",
    "Chip_No_Per_Channel": "4",
    "Flash_Comm_Protocol": "NVDDR2",
}
_FLASH_TAGS = {
    "Flash_Technology": "MLC",
    "CMD_Suspension_Support": "ERASE",
    "Page_Read_Latency_LSB": "75000",
    "Page_Read_Latency_CSB": "75000",
    "Page_Read_Latency_MSB": "75000",
    "Page_Program_Latency_LSB": "750000",
    "Page_Program_Latency_CSB": "750000",
    "Page_Program_Latency_MSB": "750000",
    "Block_Erase_Latency": "3800000",
    "Block_PE_Cycles_Limit": "10000",
    "Suspend_Erase_Time": "700000",
    "Suspend_Program_Time": "100000",
    "Die_No_Per_Chip": "2",
    "Plane_No_Per_Die": "2",
    "Block_No_Per_Plane": "2048",
    "Page_No_Per_Block": "256",
    "Page_Capacity": "8192",
    "Page_Metadat_Capacity": "1872",
}
# PCIe payload rate per lane in GB/s (10^9 B/s) after line coding, by generation.
_PCIE_GB_S = {1: 0.25, 2: 0.5, 3: 8 * 128 / 130 / 8, 4: 16 * 128 / 130 / 8, 5: 32 * 128 / 130 / 8}
_CACHE_MODES = {"TURNED_OFF": "off", "WRITE_CACHE": "write", "READ_CACHE": "read", "WRITE_READ_CACHE": "read_write"}
_NEVER_SUSPENDS = (
    "stock MQSim never suspends: its schedulers refuse a busy chip before the suspension test (a missing "
    "break) and pass the suspension flags to TSU_Base in the wrong order; ssdkit does what the file asks "
    '(--mqsim-compat sets tsu.suspension = "none" to match MQSim\'s output)'
)


def _device(conv: _Conv, root: _Element) -> tuple[dict, dict]:
    """The device sections of the TOML tree, and facts the workload needs."""
    host_elems, dev_elems = [], []
    for child in root:
        path = f"{EXEC_ROOT}/{child.tag}"
        if child.tag == "Host_Parameter_Set":
            host_elems.append((child, path))
        elif child.tag == "Device_Parameter_Set":
            dev_elems.append((child, path))
        else:
            conv.unmapped(
                path,
                (child.text or "").strip(),
                _unknown_reason(child.tag, ["Host_Parameter_Set", "Device_Parameter_Set"]),
                cause="no_effect",
            )
    empty = _Element("x")
    h_elem, h_path = host_elems[-1] if host_elems else (empty, f"{EXEC_ROOT}/Host_Parameter_Set")
    d_elem, d_path = dev_elems[-1] if dev_elems else (empty, f"{EXEC_ROOT}/Device_Parameter_Set")
    host = _Section(conv, h_elem, h_path, list(_HOST_TAGS))
    dev = _Section(conv, d_elem, d_path, list(_DEVICE_TAGS), nested=("Flash_Parameter_Set",))
    fl_list = dev.children.get("Flash_Parameter_Set", [])
    f_elem, f_path = fl_list[-1] if fl_list else (empty, f"{d_path}/Flash_Parameter_Set")
    fl = _Section(conv, f_elem, f_path, list(_FLASH_TAGS))

    def H(tag: str) -> tuple:
        return host.get(tag, _HOST_TAGS[tag])

    def D(tag: str) -> tuple:
        return dev.get(tag, _DEVICE_TAGS[tag])

    def F(tag: str) -> tuple:
        return fl.get(tag, _FLASH_TAGS[tag])

    interface: dict[str, Any] = {}
    pcie: dict[str, Any] = {}
    ftl: dict[str, Any] = {"mapping": "page"}
    tsu: dict[str, Any] = {}
    precondition: dict[str, Any] = {}
    flash: dict[str, Any] = {}
    bus: dict[str, Any] = {}

    # Host interface.
    p = D("HostInterface_Type")
    kind = conv.enum(p, ("NVME", "SATA"))
    interface["type"] = kind.lower()
    conv.src("interface.type", p)
    conv.enum(D("Memory_Type"), ("FLASH",))

    p = D("IO_Queue_Depth")
    qd = conv.int(p, 1, 65535)
    if kind == "NVME":
        if qd < 2:
            conv.unmapped(
                p[1],
                qd,
                "ssdkit needs at least 2 submission-queue entries; left at 1024",
                present=p[2],
                cause="value_changed",
            )
        else:
            interface["io_queue_depth"] = qd
            conv.src("interface.io_queue_depth", p)
    else:
        interface["ncq_depth"] = min(qd, 32)
        conv.src("interface.ncq_depth", p)
        if qd > 32:
            conv.approx(
                p[1],
                qd,
                "ssdkit's SATA NCQ has at most 32 entries; converted to 32",
                present=p[2],
                cause="value_changed",
            )
    p = D("Queue_Fetch_Size")
    qfs = conv.int(p, 1, 65535)
    if kind == "NVME":
        interface["queue_fetch_size"] = qfs
        conv.src("interface.queue_fetch_size", p)
    elif p[2]:
        conv.unmapped(p[1], qfs, "NVMe only: no effect with HostInterface_Type SATA", cause="no_effect")
    # interface.max_inflight_commands stays unset: MQSim's NVMe host interface bounds only each
    # queue (Queue_Fetch_Size), and its SATA NCQ (IO_Queue_Depth, above) is ncq_depth.

    # PCIe.
    p = H("PCIe_Lane_Bandwidth")
    bw = conv.float(p, 0.0)
    gen = min(_PCIE_GB_S, key=lambda g: abs(_PCIE_GB_S[g] - bw))
    if bw > 0 and abs(_PCIE_GB_S[gen] - bw) <= 0.02 * bw:
        pcie["generation"] = gen
        conv.src("pcie.generation", p)
        if abs(_PCIE_GB_S[gen] - bw) > 1e-9:
            conv.approx(
                p[1],
                p[0],
                f"ssdkit models PCIe by generation; converted to generation {gen} "
                f"({_PCIE_GB_S[gen]:.4f} GB/s per lane after 128b/130b coding)",
                present=p[2],
            )
    else:
        conv.unmapped(
            p[1],
            p[0],
            "no PCIe generation has this lane rate (1: 0.25, 2: 0.5, 3: 0.985, 4: 1.97, 5: 3.94 GB/s); "
            "pcie.generation left at ssdkit's default 3",
            present=p[2],
            cause="value_changed",
        )
    p = H("PCIe_Lane_Count")
    lanes = conv.int(p, 1)
    if lanes in (1, 2, 4, 8, 12, 16, 32):
        pcie["lanes"] = lanes
        conv.src("pcie.lanes", p)
    else:
        conv.unmapped(
            p[1],
            lanes,
            "not a PCIe link width (ssdkit allows 1, 2, 4, 8, 12, 16 or 32 lanes); left at 4",
            present=p[2],
            cause="value_changed",
        )
    pcie["max_payload_bytes"] = 128  # MQSim PCIe_Link.h
    pcie["packet_overhead_bytes"] = 28  # 20 B TLP header + 6 B DLLP + 2 B PHY (MQSim PCIe_Link.h)
    p = H("SATA_Processing_Delay")
    delay = conv.int(p, 0)
    if kind == "SATA":
        # MQSim's SATA_HBA pays it once on submission and once on completion, one request at
        # a time in each direction; ssdkit's host does the same.
        interface["sata_processing_delay_us"] = delay / 1000
        conv.src("interface.sata_processing_delay_us", p)
    elif kind == "NVME" and p[2]:
        conv.unmapped(p[1], delay, "SATA only: no effect with HostInterface_Type NVME", cause="no_effect")
    for tag in ("Enable_ResponseTime_Logging", "ResponseTime_Logging_Period_Length"):
        p = H(tag)
        if tag.startswith("Enable"):
            conv.bool(p)
        else:
            conv.int(p, 0)
        if p[2]:
            conv.unmapped(
                p[1], p[0], "output option: ssdkit results have no periodic response-time log", cause="output_only"
            )

    # Seeds, preconditioning.
    p = D("Seed")
    conv.int(p)
    if p[2]:
        conv.unmapped(
            p[1],
            p[0],
            "ssdkit derives every random stream from run.seed; MQSim's seeds cannot be reproduced",
            cause="random_seed",
        )
    p = D("Enabled_Preconditioning")
    # MQSim maps a never-written page on its first read and reads it from flash.
    ftl["unmapped_reads"] = "read_flash"
    preconditioning = conv.bool(p)
    if preconditioning:
        precondition["mode"] = "fast"
        conv.approx(
            p[1],
            p[0],
            'converted to precondition.mode = "fast": ssdkit sets the GC steady state of the flows\' write '
            "pattern over the occupied part of the logical space (precondition.occupancy, from "
            "Initial_Occupancy_Percentage) from a mean-field model; MQSim from its own workload statistics",
            present=p[2],
        )
    else:
        # MQSim starts empty and maps a page on its first read: exactly "empty" with
        # ftl.unmapped_reads = "read_flash".
        precondition["mode"] = "empty"
    conv.sources["precondition.mode"] = f"<{p[1]}> = {p[0]}"

    # Data cache and mapping table. The cache's mode is per flow in MQSim
    # (Device_Level_Data_Caching_Mode, in workload.xml): `_caching` sets it per scenario; a
    # device alone takes MQSim's default for flows, WRITE_CACHE.
    p = D("Caching_Mechanism")
    if conv.enum(p, ("SIMPLE", "ADVANCED")) == "SIMPLE":
        conv.approx(
            p[1],
            p[0],
            "ssdkit models MQSim's ADVANCED cache manager (LRU pages with sector bitmaps, DRAM timing); "
            "SIMPLE is a write cache without them",
            present=p[2],
        )
    cache: dict[str, Any] = {"mode": "write"}
    p = D("Data_Cache_Sharing_Mode")
    cache["sharing"] = (
        "per_flow" if conv.enum(p, ("SHARED", "EQUAL_PARTITIONING")) == "EQUAL_PARTITIONING" else "shared"
    )
    conv.src("cache.sharing", p)
    for tag, key, lo in (
        ("Data_Cache_Capacity", "capacity_bytes", 1),
        ("Data_Cache_DRAM_Row_Size", "dram_row_bytes", 64),
        ("Data_Cache_DRAM_Data_Rate", "dram_data_rate_mts", 1),
        ("Data_Cache_DRAM_Data_Busrt_Size", "dram_burst_bytes", 1),
        ("Data_Cache_DRAM_tRCD", "dram_trcd_ns", 0),
        ("Data_Cache_DRAM_tCL", "dram_tcl_ns", 0),
        ("Data_Cache_DRAM_tRP", "dram_trp_ns", 0),
    ):
        p = D(tag)
        v = conv.int(p, lo)
        cache[key] = float(v) if key.endswith("_ns") else v
        conv.src(f"cache.{key}", p)
    p = D("Address_Mapping")
    if conv.enum(p, ("PAGE_LEVEL", "HYBRID")) == "HYBRID":
        conv.unmapped(
            p[1],
            p[0],
            "MQSim's HYBRID mapping is an empty stub (no behaviour to reproduce); converted as PAGE_LEVEL."
            ' ssdkit\'s own hybrid mapping is ftl.mapping = { scheme = "hybrid" } (docs/ftl.md)',
            cause="value_changed",
        )
    p = D("Ideal_Mapping_Table")
    ideal = conv.bool(p)
    cap_p = D("CMT_Capacity")
    cap = conv.int(cap_p, 0)
    share_p = D("CMT_Sharing_Mode")
    sharing = conv.enum(share_p, ("SHARED", "EQUAL_PARTITIONING"))
    if ideal:
        ftl["cmt"] = {"mode": "ideal"}
        conv.src("ftl.cmt.mode", p)
        for q in (cap_p, share_p):
            if q[2]:
                conv.unmapped(q[1], q[0], "no effect with Ideal_Mapping_Table = true", cause="no_effect")
    else:
        if cap == 0:
            raise conv.err(
                cap_p[1], cap_p[0], "at least one translation page of entries with Ideal_Mapping_Table = false"
            )
        ftl["cmt"] = {
            "mode": "per_flow" if sharing == "EQUAL_PARTITIONING" else "shared",
            "capacity_bytes": cap,
        }
        conv.src("ftl.cmt.mode", share_p)
        conv.src("ftl.cmt.capacity_bytes", cap_p)
        conv.approx(
            cap_p[1],
            cap_p[0],
            "ssdkit caches whole translation pages (a miss brings in every entry of the page it reads); "
            "MQSim caches single entries: sequential lookups hit more often in ssdkit",
            present=cap_p[2],
        )

    # FTL.
    p = D("Plane_Allocation_Scheme")
    scheme = (p[0] or "").upper()
    if len(scheme) != 4 or sorted(scheme) != sorted("CWDP"):
        raise conv.err(p[1], p[0], "a permutation of the letters C, W, D, P (e.g. CWDP)")
    ftl["allocation_order"] = scheme
    ftl["placement"] = "static"
    conv.src("ftl.allocation_order", p)
    p = D("Transaction_Scheduling_Policy")
    tsp = conv.enum(p, ("OUT_OF_ORDER", "PRIORITY_OUT_OF_ORDER", "FLIN"))
    tsu["policy"] = "out_of_order"
    if tsp == "OUT_OF_ORDER":
        conv.src("tsu.policy", p)
    elif tsp == "PRIORITY_OUT_OF_ORDER":
        tsu["policy"] = "priority_out_of_order"
        conv.src("tsu.policy", p)
    else:
        tsu["policy"] = "flin"
        conv.approx(
            p[1],
            p[0],
            "converted to tsu.policy = \"flin\", ssdkit's FLIN with the constants of MQSim's TSU_FLIN: MQSim "
            'itself cannot run FLIN (its construction is commented out, so MQSim stops with "No '
            'implementation is available")',
            present=p[2],
        )
    p = D("Overprovisioning_Ratio")
    # ftl.spare_factor's range in the core; a default in its place would simulate another device.
    ftl["spare_factor"] = conv.float(p, 0.01, 0.9, " (ssdkit's ftl.spare_factor)")
    conv.src("ftl.spare_factor", p)
    p = D("GC_Exec_Threshold")
    ftl["gc_threshold"] = conv.float(p, 0.0, 1.0)
    conv.src("ftl.gc_threshold", p)
    p = D("GC_Hard_Threshold")
    ftl["gc_hard_threshold"] = conv.float(p, 0.0, 1.0)
    conv.src("ftl.gc_hard_threshold", p)
    p_pol = D("GC_Block_Selection_Policy")
    pol = conv.enum(p_pol, ("GREEDY", "RGA", "RANDOM", "RANDOM_P", "RANDOM_PP", "FIFO"))
    p = D("Use_Copyback_for_GC")
    ftl["gc_copyback"] = conv.bool(p)
    conv.src("ftl.gc_copyback", p)
    p = D("Preemptible_GC_Enabled")
    ftl["gc_preemptible"] = conv.bool(p)
    conv.src("ftl.gc_preemptible", p)
    p = D("Dynamic_Wearleveling_Enabled")
    conv.bool(p)
    if p[2]:
        conv.unmapped(
            p[1],
            p[0],
            "MQSim parses it but never passes it to its GC/WL unit (no effect); ftl.wl_dynamic left at ssdkit's "
            "default",
            cause="no_effect",
        )
    for tag in ("Static_Wearleveling_Enabled", "Static_Wearleveling_Threshold"):
        p = D(tag)
        conv.bool(p) if tag.endswith("Enabled") else conv.int(p, 0)
        if p[2]:
            conv.unmapped(
                p[1],
                p[0],
                "MQSim parses it but never uses it (no effect); ssdkit's static wear levelling stays off (its default)",
                cause="no_effect",
            )
    # Suspension thresholds (ns); which apply depends on CMD_Suspension_Support (below).
    suspend_thresholds = {
        "program_suspend_above_us": D("Preferred_suspend_write_time_for_read"),
        "erase_suspend_above_us": D("Prefered_suspend_erase_time_for_read"),
        "_erase_for_write": D("Preferred_suspend_erase_time_for_write"),
    }
    for p in suspend_thresholds.values():
        conv.int(p, 0)

    # Back end.
    for param, key in (
        (D("Flash_Channel_Count"), "channels"),
        (D("Chip_No_Per_Channel"), "chips_per_channel"),
        (F("Die_No_Per_Chip"), "dies_per_chip"),
        (F("Plane_No_Per_Die"), "planes_per_die"),
        (F("Block_No_Per_Plane"), "blocks_per_plane"),
        (F("Page_No_Per_Block"), "pages_per_block"),
        (F("Page_Capacity"), "page_size_bytes"),
    ):
        flash[key] = conv.int(param, 1)
        conv.src(f"flash.{key}", param)
    blocks = flash["blocks_per_plane"]
    if ftl["cmt"]["mode"] != "ideal":
        # A translation page holds MQSim's GTD entries (no logical address): its entry count
        # sets which lookups share a translation page read and how many pages the map takes.
        geometry = ("channels", "chips_per_channel", "dies_per_chip", "planes_per_die", "blocks_per_plane")
        physical = math.prod(flash[k] for k in geometry) * flash["pages_per_block"]
        sectors = flash["page_size_bytes"] // SECTOR
        ftl["cmt"]["translation_entry_bytes"] = math.ceil((math.log2(physical) + sectors) / 8)
    p = F("Flash_Technology")
    cell = conv.enum(p, ("SLC", "MLC", "TLC"))
    flash["cell_type"] = cell
    conv.src("flash.cell_type", p)
    kinds = {"SLC": ("LSB",), "MLC": ("LSB", "MSB"), "TLC": ("LSB", "CSB", "MSB")}[cell]
    for op_name, key in (("Read", "read_us"), ("Program", "program_us")):
        vals = []
        for t in ("LSB", "CSB", "MSB"):
            p = F(f"Page_{op_name}_Latency_{t}")
            ns = conv.float(p, 0.0)
            if t in kinds:
                vals.append(ns / 1000)
                conv.src(f"flash.{key}", p)
            elif p[2]:
                conv.unmapped(p[1], p[0], f"{cell} has no {t} pages (MQSim ignores it too)", cause="no_effect")
        flash[key] = vals
    p = F("Block_Erase_Latency")
    flash["erase_us"] = conv.float(p, 0.0) / 1000
    conv.src("flash.erase_us", p)
    flash["multiplane"] = True
    _suspension(conv, tsu, F, suspend_thresholds)
    for tag, reason, cause in (
        (
            "Block_PE_Cycles_Limit",
            "ssdkit has no endurance limit (erase counts are reported in the result)",
            "not_modelled",
        ),
        ("Page_Metadat_Capacity", "MQSim parses it but never uses it (no effect)", "no_effect"),
    ):
        p = F(tag)
        conv.int(p, 0)
        if p[2]:
            conv.unmapped(p[1], p[0], reason, cause=cause)
    p = D("Flash_Channel_Width")
    width = conv.int(p, 1)
    if width in (1, 2):
        bus["width_bits"] = 8 * width
        conv.src("flash.bus.width_bits", p)
    else:
        conv.unmapped(
            p[1], width, "ssdkit's channel is 8 or 16 bits wide; left at 8", present=p[2], cause="value_changed"
        )
    p = D("Channel_Transfer_Rate")
    bus["rate_mts"] = conv.float(p, 0.0)
    conv.src("flash.bus.rate_mts", p)
    conv.enum(D("Flash_Comm_Protocol"), ("NVDDR2",))

    # GC policy (RGA's candidate count depends on the geometry).
    if pol == "GREEDY":
        ftl["gc_policy"] = "greedy"
    elif pol == "RGA":
        ftl["gc_policy"] = {"type": "d_choices", "d": max(1, int(math.log2(blocks)))}
        conv.sources["ftl.gc_policy.d"] = f"<{p_pol[1]}> = RGA: MQSim's set size log2(Block_No_Per_Plane)"
    elif pol == "RANDOM":
        ftl["gc_policy"] = "random"
    elif pol == "FIFO":
        ftl["gc_policy"] = "fifo"
    else:
        ftl["gc_policy"] = "random"
        conv.approx(
            p_pol[1],
            p_pol[0],
            'converted to gc_policy = "random"; MQSim\'s RANDOM_P/RANDOM_PP pick only among blocks with enough '
            "invalid pages",
            present=p_pol[2],
        )
    conv.src("ftl.gc_policy", p_pol)
    ftl["firmware_request_us"] = 1.0  # ssdkit assumptions, as in the mqsim-paper preset
    ftl["firmware_transaction_us"] = 0.25

    flash["bus"] = bus
    # MQSim has no DRAM size: make room for both caches.
    need = cache["capacity_bytes"] + ftl["cmt"].get("capacity_bytes", 0)
    if need > 1 << 30:
        cache["dram_bytes"] = need
    doc = {
        "interface": interface,
        "pcie": pcie,
        "cache": cache,
        "ftl": ftl,
        "tsu": tsu,
        "precondition": precondition,
        "flash": flash,
    }
    facts = {
        "kind": kind,
        "tsp": tsp,
        "geometry": (flash["channels"], flash["chips_per_channel"], flash["dies_per_chip"], flash["planes_per_die"]),
        "preconditioning": preconditioning,
    }
    return doc, facts


# ---------------------------------------------------------------------------------------------
# Workload (workload.xml)

_COMMON_TAGS = {
    "Priority_Class": None,
    "Device_Level_Data_Caching_Mode": None,
    "Channel_IDs": None,
    "Chip_IDs": None,
    "Die_IDs": None,
    "Plane_IDs": None,
    "Initial_Occupancy_Percentage": None,
}
_SYNTH_TAGS = [
    *_COMMON_TAGS,
    "Working_Set_Percentage",
    "Synthetic_Generator_Type",
    "Read_Percentage",
    "Address_Distribution",
    "Percentage_of_Hot_Region",
    "Generated_Aligned_Addresses",
    "Address_Alignment_Unit",
    "Request_Size_Distribution",
    "Average_Request_Size",
    "Variance_Request_Size",
    "Seed",
    "Average_No_of_Reqs_in_Queue",
    "Bandwidth",
    "Stop_Time",
    "Total_Requests_To_Generate",
]
_TRACE_TAGS = [*_COMMON_TAGS, "File_Path", "Percentage_To_Be_Executed", "Relay_Count", "Time_Unit"]
_SYNTH = "IO_Flow_Parameter_Set_Synthetic"
_TRACE = "IO_Flow_Parameter_Set_Trace_Based"


def _ids(conv: _Conv, sec: _Section, tag: str, count: int) -> list[int] | None:
    text, path, present = sec.get(tag, None)
    if not present:
        return None
    items = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not items or not all(re.fullmatch(r"\d+", s) for s in items):
        raise conv.err(path, text, f"comma-separated indices 0..{count - 1}")
    ids = sorted({int(s) for s in items})  # MQSim keeps a set
    if ids[-1] >= count:
        raise conv.err(path, text, f"comma-separated indices 0..{count - 1}")
    return None if ids == list(range(count)) else ids


def _flow(
    conv: _Conv,
    elem: _Element,
    path: str,
    i: int,
    n: int,
    capacity: int,
    facts: dict,
    trace_ctx: dict,
) -> tuple[dict, str | None]:
    """One flow's table, and its priority class (None when absent)."""
    synthetic = elem.tag == _SYNTH
    sec = _Section(conv, elem, path, _SYNTH_TAGS if synthetic else _TRACE_TAGS)
    f: dict[str, Any] = {"name": f"flow{i}" if synthetic else ""}
    key = f"flow.{i}"

    prio = None
    p = sec.get("Priority_Class", None)
    if p[2]:
        prio = conv.enum(p, ("URGENT", "HIGH", "MEDIUM", "LOW"))
    p = sec.get("Device_Level_Data_Caching_Mode", "WRITE_CACHE")
    mode = conv.enum(p, ("TURNED_OFF", "WRITE_CACHE", "READ_CACHE", "WRITE_READ_CACHE"))
    f["_caching"] = (_CACHE_MODES[mode], p)
    geometry = facts["geometry"]
    pinned = False
    for tag, k, count in zip(
        ("Channel_IDs", "Chip_IDs", "Die_IDs", "Plane_IDs"), ("channels", "chips", "dies", "planes"), geometry
    ):
        ids = _ids(conv, sec, tag, count)
        if ids is not None:
            f[k] = ids
            pinned = True
            conv.src(f"{key}.{k}", sec.get(tag, None))
    if pinned:
        conv.approx(
            path + "/Channel_IDs..Plane_IDs",
            "(partial)",
            "ssdkit pins the flow's writes to these resources; MQSim also sizes the flow's logical space by "
            "them, ssdkit keeps the equal split",
        )
    p = sec.get("Initial_Occupancy_Percentage", None)
    if p[2]:
        pct = conv.int(p, 0, 100)
        if facts.get("preconditioning"):
            # One device-wide precondition.occupancy: gathered over the scenario's flows.
            f["_occupancy"] = (pct, p[1])
        else:
            conv.unmapped(
                p[1],
                p[0],
                "MQSim uses it only with Enabled_Preconditioning = true; the device starts empty",
                cause="no_effect",
            )

    # The flow's share of the logical space, in sectors (MQSim: capacity / flows each).
    cap_s = capacity // SECTOR
    per = cap_s // n
    start_s = i * per

    if not synthetic:
        p = sec.get("File_Path", None)
        if not p[2] or not p[0]:
            raise MqsimError(f"{conv.label}: <{p[1]}> is missing; a trace flow needs its trace file")
        f["name"] = os.path.splitext(os.path.basename(p[0]))[0] or f"flow{i}"
        f["trace"] = _resolve_trace(conv, p, trace_ctx)
        conv.src(f"{key}.trace", p)
        f["trace_format"] = "mqsim"
        f["replay"] = "timed"
        f["fold"] = "modulo"  # MQSim folds addresses beyond the flow's range modulo the range
        f["start_bytes"] = start_s * SECTOR
        f["range_bytes"] = per * SECTOR
        p = sec.get("Percentage_To_Be_Executed", "100")
        pct = conv.int(p, 0, 100)
        p_relay = sec.get("Relay_Count", "1")
        relay = conv.int(p_relay, 0)
        if relay != 1:
            conv.unmapped(
                p_relay[1], relay, "ssdkit replays a trace once (no Relay_Count repeats)", cause="value_changed"
            )
        if pct != 100:
            conv.unmapped(
                p[1], pct, "ssdkit replays the whole trace (use flow.N.requests to cut it)", cause="value_changed"
            )
        p = sec.get("Time_Unit", None)
        if p[2]:
            conv.enum(p, ("PICOSECOND", "NANOSECOND", "MICROSECOND"))
            conv.unmapped(
                p[1],
                p[0],
                "MQSim parses it but always reads trace timestamps as nanoseconds; converted as nanoseconds "
                "(trace_format mqsim)",
                cause="no_effect",
            )
        return f, prio

    p = sec.get("Working_Set_Percentage", None)
    wsp = conv.int(p)
    if not 1 <= wsp <= 100:
        wsp = 100  # as MQSim does, silently there
        conv.approx(
            p[1], p[0], "outside 1..100: MQSim uses 100 (the whole share); so does this conversion", cause="no_effect"
        )
    p = sec.get("Synthetic_Generator_Type", None)
    gen = conv.enum(p, ("QUEUE_DEPTH", "BANDWIDTH"))
    p = sec.get("Read_Percentage", None)
    f["read_fraction"] = conv.int(p, 0, 100) / 100
    conv.src(f"{key}.read_fraction", p)
    p = sec.get("Request_Size_Distribution", None)
    sizes = conv.enum(p, ("FIXED", "NORMAL"))
    p_avg = sec.get("Average_Request_Size", None)
    avg = conv.int(p_avg, 1)
    if sizes == "FIXED":
        f["request_bytes"] = avg * SECTOR
        conv.src(f"{key}.request_bytes", p_avg)
    else:
        f["size"] = "normal"
        f["request_bytes"] = avg * SECTOR
        p = sec.get("Variance_Request_Size", None)
        f["size_stdev_bytes"] = conv.int(p, 0) * SECTOR  # MQSim uses it as the standard deviation
        conv.src(f"{key}.size_stdev_bytes", p)

    p_dist = sec.get("Address_Distribution", None)
    dist = conv.enum(p_dist, ("STREAMING", "RANDOM_UNIFORM", "RANDOM_HOTCOLD"))
    p_al = sec.get("Generated_Aligned_Addresses", None)
    aligned = conv.bool(p_al) if p_al[2] else False
    align_s = 1
    if aligned:
        p = sec.get("Address_Alignment_Unit", None)
        align_s = conv.int(p, 1)
        conv.src(f"{key}.align_bytes", p)
    f["align_bytes"] = align_s * SECTOR
    if dist == "STREAMING":
        f["pattern"] = "sequential"
        if sizes == "FIXED" and aligned and avg % align_s:
            f["stride_bytes"] = -(-avg // align_s) * align_s * SECTOR  # MQSim rounds the next start up
    elif dist == "RANDOM_UNIFORM":
        f["pattern"] = "random"
    else:
        p_hot = sec.get("Percentage_of_Hot_Region", None)
        hot = conv.int(p_hot, 1, 99)
        f["pattern"] = "hotcold"
        f["hot_space_fraction"] = hot / 100
        f["hot_access_fraction"] = (100 - hot) / 100
        conv.src(f"{key}.hot_space_fraction", p_hot)

    if gen == "QUEUE_DEPTH":
        p = sec.get("Average_No_of_Reqs_in_Queue", None)
        f["queue_depth"] = conv.int(p, 1, 65535)
        conv.src(f"{key}.queue_depth", p)
    else:
        p = sec.get("Bandwidth", None)
        if not p[2]:
            raise MqsimError(
                f"{conv.label}: <{p[1]}> is missing: a BANDWIDTH flow needs <Bandwidth> in bytes/s (MQSim @7ec40e3 "
                "does not read <Intensity>, so it would run with an uninitialised bandwidth)"
            )
        bw = conv.int(p, 1)
        per_s = (bw // SECTOR) // avg  # MQSim's integer arithmetic (Host_System.cpp)
        if per_s == 0:
            raise conv.err(p[1], p[0], f"at least {SECTOR * avg} bytes/s (one request of the average size per second)")
        gap_ns = 1_000_000_000 // per_s
        f["arrival"] = "exponential"
        f["rate_iops"] = 1e9 / gap_ns
        conv.src(f"{key}.rate_iops", p)

    p = sec.get("Seed", None)
    seed = conv.int(p) if p[2] else None
    if dist == "STREAMING":
        # Where MQSim begins the stream: set by _streaming_starts once every flow's share of
        # the logical space is known.
        f["_streaming"] = (seed, p, p_dist, align_s if aligned else None, wsp, avg)
    if p[2]:
        conv.unmapped(
            p[1],
            p[0],
            "ssdkit derives every flow's random stream from run.seed and the flow index"
            + (
                "; MQSim's first STREAMING address is reproduced from it"
                if dist == "STREAMING" and _mqsim_random.streaming_seed_reproduced(seed)
                else ""
            ),
            cause="random_seed",
        )

    p_stop = sec.get("Stop_Time", "0")
    stop_ns = conv.int(p_stop, 0)
    p_total = sec.get("Total_Requests_To_Generate", "0")
    total = conv.int(p_total, 0)
    if stop_ns > 0:
        f["requests"] = 0
        f["duration_ms"] = stop_ns / 1e6
        conv.src(f"{key}.duration_ms", p_stop)
    elif total > 0:
        f["requests"] = total
        conv.src(f"{key}.requests", p_total)
    else:
        raise MqsimError(
            f"{conv.label}: <{path}>: Stop_Time and Total_Requests_To_Generate are both 0 or absent; "
            "the flow would never stop (or never start)"
        )

    # Working set: Working_Set_Percentage of the flow's share, from its start (IO_Flow_Synthetic.cpp).
    ws_s = per * wsp // 100
    end_s = start_s + ws_s
    if aligned and start_s % align_s:
        start_s += align_s - start_s % align_s
    f["start_bytes"] = start_s * SECTOR
    f["range_bytes"] = max(0, end_s - start_s) * SECTOR
    if f["range_bytes"] < avg * SECTOR:
        raise MqsimError(
            f"{conv.label}: <{path}>: the working set ({f['range_bytes']} bytes) is smaller than one request"
        )
    conv.sources[f"{key}.range_bytes"] = f"<{path}/Working_Set_Percentage> = {wsp}"
    return f, prio


def _streaming_starts(conv: _Conv, device: dict, facts: dict, flows: list[dict]) -> None:
    """Begins each STREAMING flow where MQSim begins it: at the address its seed draws in its
    working set (IO_Flow_Synthetic.cpp, `Start_simulation`), reproduced by `_mqsim_random`."""
    if not any("_streaming" in f for f in flows):
        return
    fl = device["flash"]
    pins = ("channels", "chips", "dies", "planes")
    ranges = _mqsim_random.flow_lha_ranges(
        facts["geometry"],
        # SATA: MQSim gives every flow the whole device when it splits the logical space
        # (SSD_Device.cpp, the HostInterface_Types::SATA case), whatever its *_IDs say.
        [[None if facts["kind"] == "SATA" else f.get(k) for k in pins] for f in flows],
        fl["blocks_per_plane"],
        fl["pages_per_block"],
        fl["page_size_bytes"] // SECTOR,
        device["ftl"]["spare_factor"],
    )
    for i, (f, (first, last)) in enumerate(zip(flows, ranges)):
        if "_streaming" not in f:
            continue
        seed, p_seed, p_dist, align, wsp, avg = f.pop("_streaming")
        if not _mqsim_random.streaming_seed_reproduced(seed):
            why = (
                "MQSim leaves the seed of a flow without <Seed> uninitialised"
                if seed is None
                else f"MQSim's draw is reproduced for seeds {_mqsim_random.SEEDS}"
            )
            conv.approx(
                p_dist[1],
                p_dist[0],
                f"MQSim starts a STREAMING flow at a random address of its working set; {why}, so ssdkit "
                "starts at its beginning",
            )
            continue
        ws = wsp / 100.0
        at = _mqsim_random.streaming_start(seed, first, last, ws, align)
        start_s, range_s = f["start_bytes"] // SECTOR, f["range_bytes"] // SECTOR
        # The first request's size is drawn in MQSim for NORMAL sizes; the mean stands in.
        if at + avg > _mqsim_random.working_set_end(first, last, ws):
            off = 0  # MQSim begins at the flow's start when the first request would pass the end
        elif start_s <= at and at - start_s + avg <= range_s:
            off = at - start_s
        else:
            # Pinned flows: MQSim sizes each flow's space by its planes, ssdkit splits it
            # equally; an unaligned flow start: MQSim's address, aligned down, lies before
            # it. Keep the offset into the working set, on the alignment.
            off = max(0, at - first)
            if align:
                off -= off % align
            if off + avg > range_s:
                off = 0
            conv.approx(
                p_dist[1],
                p_dist[0],
                f"MQSim begins this STREAMING flow at sector {at}, outside its range here (ssdkit splits the "
                f"logical space equally and aligns each flow's start); ssdkit begins {off} sectors into it",
            )
        if off:
            f["first_offset_bytes"] = off * SECTOR
            conv.sources[f"flow.{i}.first_offset_bytes"] = (
                f"<{p_seed[1]}> = {seed}: MQSim's first STREAMING address, sector {at}"
            )


def _resolve_trace(conv: _Conv, p: tuple, ctx: dict) -> str:
    text, path, _ = p
    tried = []
    cands = []
    if os.path.isabs(text):
        cands.append(text)
    else:
        if ctx.get("trace_dir"):
            cands += [os.path.join(ctx["trace_dir"], text), os.path.join(ctx["trace_dir"], os.path.basename(text))]
        else:
            if ctx.get("workload_dir"):
                cands.append(os.path.join(ctx["workload_dir"], text))
            cands.append(os.path.join(os.getcwd(), text))
    for c in cands:
        tried.append(c)
        if os.path.isfile(c):
            found = os.path.abspath(c)
            rel_to = ctx.get("relative_to")
            if rel_to:
                return os.path.relpath(found, rel_to)
            return found
    raise MqsimError(
        f"{conv.label}: <{path}>: trace file `{text}` not found (tried {', '.join(tried)}); "
        "give its folder with --trace-dir"
    )


# Host-side costs MQSim does not model, kept off in a converted file so that its results compare
# with MQSim's; the keys to turn them on.
HOST_SIDE_LINES = [
    "Host side as in MQSim: response time ends at the completion entry; no MSI, ISR or polling",
    '(host.completion = "none"), no completion-queue doorbell, DLLPs folded into',
    'pcie.packet_overhead_bytes. For what an application sees: host.completion = "interrupt"',
    'or "polled" (docs/host.md); DLLPs as packets: pcie.ack_every_tlps.',
]


# ---------------------------------------------------------------------------------------------
# Public entry points


def import_mqsim(
    ssdconfig: PathArg,
    workload: PathArg | None = None,
    *,
    trace_dir: PathArg | None = None,
    overrides: Any = None,
    apply_overrides: bool = True,
    relative_to: PathArg | None = None,
    mqsim_compat: bool = False,
) -> list[MqsimScenario]:
    """Converts MQSim's ssdconfig.xml (and workload.xml) to ssdkit configurations, one per
    ``<IO_Scenario>`` (without a workload: one device-only configuration, ``index`` 0, with no
    flows). Paths or XML text. Trace files are looked up in ``trace_dir`` if given, else beside
    the workload file, else in the working directory; they are written as absolute paths, or
    relative to ``relative_to`` (the folder of the TOML file to write). ``overrides`` (dict or
    ``"key=value"`` list) apply to the device before capacities are computed and, unless
    ``apply_overrides`` is false, to each result. ``mqsim_compat`` turns on the MQSim
    behaviours of :data:`MQSIM_COMPAT` (before the overrides)."""
    root, label, _ = _read_xml(ssdconfig, EXEC_ROOT, "ssdconfig.xml")
    dconv = _Conv(label)
    device, facts = _device(dconv, root)
    ov = override_list(overrides)
    try:
        cap = device_capacity(device, ov, label)
    except ConfigError as e:
        raise MqsimError(annotate(str(e), dconv.sources)) from None
    if workload is None:
        doc = dict(device)
        return [
            _finish(0, 0, doc, dconv.entries, dict(dconv.sources), cap, label, None, ov, apply_overrides, mqsim_compat)
        ]

    wroot, wlabel, wdir = _read_xml(workload, WORKLOAD_ROOT, "workload.xml")
    tctx = {
        "trace_dir": api._path(trace_dir, "trace_dir", MqsimError) if trace_dir is not None else None,
        "workload_dir": wdir,
        "relative_to": api._path(relative_to, "relative_to", MqsimError) if relative_to is not None else None,
    }
    scenarios = []
    k = 0
    wextra = _Conv(wlabel)
    for child in wroot:
        if child.tag != "IO_Scenario":
            wextra.unmapped(
                f"{WORKLOAD_ROOT}/{child.tag}",
                (child.text or "").strip(),
                _unknown_reason(child.tag, ["IO_Scenario"]),
                cause="no_effect",
            )
            continue
        k += 1
        spath = f"{WORKLOAD_ROOT}/IO_Scenario[{k}]"
        conv = _Conv(wlabel)
        flows_xml = []
        counts: dict[str, int] = {}
        for fe in child:
            counts[fe.tag] = counts.get(fe.tag, 0) + 1
            fpath = f"{spath}/{fe.tag}[{counts[fe.tag]}]"
            if fe.tag in (_SYNTH, _TRACE):
                flows_xml.append((fe, fpath))
            else:
                conv.unmapped(
                    fpath, (fe.text or "").strip(), _unknown_reason(fe.tag, [_SYNTH, _TRACE]), cause="no_effect"
                )
        if not flows_xml:
            raise MqsimError(f"{wlabel}: <{spath}> has no <{_SYNTH}> or <{_TRACE}>")
        flows, prios = [], []
        for i, (fe, fpath) in enumerate(flows_xml):
            fl, prio = _flow(conv, fe, fpath, i, len(flows_xml), cap, facts, tctx)
            flows.append(fl)
            prios.append((prio, fpath))
        _streaming_starts(conv, device, facts, flows)
        doc = {kk: (dict(v) if isinstance(v, dict) else v) for kk, v in device.items()}
        doc["interface"] = dict(device["interface"])
        _occupancy(conv, doc, flows)
        _caching(conv, doc, flows)
        _priorities(conv, doc, flows, prios, facts)
        doc["flow"] = flows
        scenarios.append((k, doc, conv.entries, {**dconv.sources, **conv.sources}))
    if not scenarios:
        raise MqsimError(f"{wlabel}: no <IO_Scenario>")
    n = len(scenarios)
    return [
        _finish(
            k,
            n,
            doc,
            dconv.entries + wextra.entries + ents,
            srcs,
            cap,
            label,
            wlabel,
            ov,
            apply_overrides,
            mqsim_compat,
        )
        for k, doc, ents, srcs in scenarios
    ]


#: MQSim behaviours ssdkit does otherwise by default, turned on by ``mqsim_compat=True``
#: (``--mqsim-compat``): (key, value, what MQSim does). Set before overrides, so ``--set``
#: switches any of them back off.
MQSIM_COMPAT: tuple[tuple[str, Any, str], ...] = (
    (
        "tsu.suspension",
        "none",
        "MQSim's schedulers never suspend a program or erase (a missing break refuses any busy chip)",
    ),
    (
        "flash.die_interleaving",
        False,
        "MQSim's scheduler never overlaps the dies of a chip (real chips interleave them)",
    ),
    (
        "interface.pipelined_transfers",
        False,
        (
            "MQSim sends a read's data when its last page is read and fetches a write's data whole "
            "(drives move it page by page)"
        ),
    ),
    (
        "ftl.cmt.granularity",
        "entry",
        (
            "MQSim's mapping cache holds single entries: a miss reads one sector of a translation page "
            "and caches that entry alone (a drive caches the page it read); with a cached map only"
        ),
    ),
    (
        "ftl.cmt.translation_pages_at_start",
        "all",
        (
            "MQSim writes its whole mapping table to flash at start, so on an empty device every miss "
            "reads flash (a fresh drive has no translation page to read); with a cached map only"
        ),
    ),
    (
        "ftl.cmt.writebacks",
        "held",
        (
            "MQSim's schedulers never issue a mapping write, so a translation page written back never reaches "
            "flash and its entries stay in DRAM for the rest of the run: later misses on it read nothing "
            "(a drive programs what it writes back); with a cached map of single entries only"
        ),
    ),
    (
        "ftl.cmt.writeback_lru",
        "front",
        (
            "MQSim's write-back reads each dirty entry of its translation page through the LRU list, making "
            "them the most recently used, so the next eviction is often another page's dirty entry "
            "(a write-back leaves the cache's order as it was); with a cached map of single entries only"
        ),
    ),
    (
        "cache.write_back",
        "mqsim",
        (
            "MQSim's write cache sends a page to flash at once unless it was written in the last second, "
            "frees it once programmed, and holds writes while one page per plane is in flight "
            "(a drive's write-back cache keeps dirty pages until they leave it); with a write cache only"
        ),
    ),
    (
        "flash.bus.program_data",
        "written_sectors",
        (
            "MQSim moves only a write's own sectors over the channel to program its page, even after reading "
            "the rest of the page back (a die programs whole pages, so a drive sends the whole page)"
        ),
    ),
    (
        "flash.bus.arbitration",
        "data_first",
        (
            "MQSim's channel moves data waiting in page registers before any new command, a translation "
            "page's first, and takes a command only when idle (a channel that queues in the order asked "
            "lets a command go ahead of data that becomes ready after it asked)"
        ),
    ),
    (
        "ftl.firmware_request_us",
        0.0,
        (
            "MQSim's firmware takes no time: a request is split and its pages translated and queued at the "
            "instant its command arrives (a controller's cores take about a microsecond a command)"
        ),
    ),
    (
        "ftl.firmware_transaction_us",
        0.0,
        "MQSim's firmware takes no time per page transaction either (a controller's, a quarter microsecond)",
    ),
    (
        "tsu.write_offsets",
        "at_queue",
        (
            "MQSim fixes a write's page when it translates the address and joins queued writes given the "
            "same page offset into multi-plane programs, anywhere in the queue (a controller picks the page "
            "when it programs); with several planes per die only"
        ),
    ),
)

#: What an import already does as MQSim does, listed beside :data:`MQSIM_COMPAT`.
MQSIM_ALREADY: tuple[str, ...] = (
    'ftl.unmapped_reads = "read_flash" (every import: MQSim maps a page on its first read)',
    "ftl.gc_refill = false (default: one collection per block opened below GC_Exec_Threshold)",
    'tsu.policy = "out_of_order" and ftl.gc_background = false (defaults)',
    "sub-page writes track sector validity (always)",
)


def compat_lines() -> list[str]:
    """The ``--mqsim-compat`` settings, one line each, then what imports already match."""
    lines = [f"{k} = {str(v).lower()}: {why}" for k, v, why in MQSIM_COMPAT]
    return lines + [f"already: {a}" for a in MQSIM_ALREADY]


def _compat_applies(key: str, doc: dict) -> bool:
    """Whether the device of ``doc`` has what the --mqsim-compat behaviour ``key`` acts on."""
    if key.startswith("ftl.cmt."):
        # An ideal map has no cache and no translation pages.
        cmt = doc.get("ftl", {}).get("cmt", {})
        if key in ("ftl.cmt.writebacks", "ftl.cmt.writeback_lru") and cmt.get("granularity", "page") != "entry":
            # Both are behaviours of MQSim's single-entry cache.
            return False
        return cmt.get("mode", "ideal") != "ideal"
    if key.startswith("cache."):
        return doc.get("cache", {}).get("mode", "off") in ("write", "read_write")
    if key == "flash.bus.arbitration":
        # The data-first order is refused with suspension, which MQSim never does.
        return doc.get("tsu", {}).get("suspension", "none") == "none"
    if key == "tsu.write_offsets":
        flash = doc.get("flash", {})
        return bool(flash.get("multiplane", True)) and flash.get("planes_per_die", 1) > 1
    return True


def _drop_inapplicable_compat(doc: dict, ov: list[str]) -> None:
    """After the overrides: a --mqsim-compat behaviour whose device part an override removed
    (``--set cache.mode=off``, ``--set flash.planes_per_die=1``) is left out, unless the
    override names it itself."""
    named = {o.split("=", 1)[0].strip() for o in ov}
    for key, _value, _ in MQSIM_COMPAT:
        if key in named or _compat_applies(key, doc):
            continue
        *path, name = key.split(".")
        table = doc
        for part in path:
            table = table.get(part, {})
        table.pop(name, None)


def _apply_compat(doc: dict) -> None:
    for key, value, _ in MQSIM_COMPAT:
        *path, name = key.split(".")
        if not _compat_applies(key, doc):
            continue
        table = doc
        for part in path:
            table[part] = dict(table.get(part, {}))
            table = table[part]
        if key == "tsu.suspension":
            # The thresholds and costs apply only with suspension on.
            kept = {k: v for k, v in table.items() if k == "policy"}
            table.clear()
            table.update(kept)
        table[name] = value


def _suspension(conv: _Conv, tsu: dict, F: Any, thresholds: dict) -> None:
    """CMD_Suspension_Support and its times, as MQSim's code means them (stock MQSim never
    suspends; see _NEVER_SUSPENDS)."""
    p = F("CMD_Suspension_Support")
    mode = conv.enum(p, ("NONE", "PROGRAM", "PROGRAM_ERASE", "ERASE"))
    costs = {"suspend_program_us": F("Suspend_Program_Time"), "suspend_erase_us": F("Suspend_Erase_Time")}
    for c in costs.values():
        conv.int(c, 0)
    if mode == "NONE":
        for q in [*costs.values(), *thresholds.values()]:
            if q[2]:
                conv.unmapped(q[1], q[0], "no effect with CMD_Suspension_Support NONE", cause="no_effect")
        return
    tsu["suspension"] = mode.lower()
    conv.src("tsu.suspension", p)
    conv.approx(p[1], p[0], _NEVER_SUSPENDS, present=p[2])
    # MQSim caps neither the suspensions of one operation nor their number.
    tsu["max_suspensions"] = 255
    program, erase = mode in ("PROGRAM", "PROGRAM_ERASE"), mode in ("ERASE", "PROGRAM_ERASE")
    wanted = [
        ("suspend_program_us", "program_suspend_above_us", program),
        ("suspend_erase_us", "erase_suspend_above_us", erase),
    ]
    for cost_key, above_key, on in wanted:
        c, t = costs[cost_key], thresholds[above_key]
        if not on:
            for q in (c, t):
                if q[2]:
                    conv.unmapped(q[1], q[0], f"no effect with CMD_Suspension_Support {mode}", cause="no_effect")
            continue
        cost_us, above_us = int(c[0]) / 1000, int(t[0]) / 1000
        tsu[cost_key] = cost_us
        conv.src(f"tsu.{cost_key}", c)
        if above_us < cost_us:
            conv.approx(
                t[1],
                t[0],
                f"below the suspension cost ({cost_us} us), which ssdkit refuses: raised to it",
                present=t[2],
            )
            above_us = cost_us
        tsu[above_key] = above_us
        conv.src(f"tsu.{above_key}", t)
    w = thresholds["_erase_for_write"]
    if erase:
        # ssdkit has one erase threshold for reads and writes: writes suspend an erase when the
        # file's write threshold equals the read one, as in MQSim's defaults.
        tsu["writes_suspend_erase"] = True
        if int(w[0]) / 1000 != tsu["erase_suspend_above_us"]:
            conv.approx(
                w[1],
                w[0],
                "ssdkit has one erase-suspension threshold for reads and writes (tsu.erase_suspend_above_us)",
                present=w[2],
            )
    elif w[2]:
        conv.unmapped(w[1], w[0], f"no effect with CMD_Suspension_Support {mode}", cause="no_effect")


def _caching(conv: _Conv, doc: dict, flows: list[dict]) -> None:
    """Device_Level_Data_Caching_Mode is per flow in MQSim; ssdkit's cache.mode is one mode
    for the device: the flows' common mode, or the first flow's (listed as approximated)."""
    modes = [f.pop("_caching") for f in flows]
    if not modes:
        return
    mode, p = modes[0]
    doc["cache"] = dict(doc["cache"])
    doc["cache"]["mode"] = mode
    conv.sources["cache.mode"] = " ".join(f"<{q[1]}> = {q[0]}" for _, q in modes)
    if len({m for m, _ in modes}) > 1:
        conv.approx(
            p[1],
            p[0],
            "MQSim caches per flow; ssdkit has one cache mode for the device: the first flow's ("
            + ", ".join(m for m, _ in modes)
            + ")",
            present=p[2],
        )
    if mode == "off":
        # The cache's own keys are refused with the cache off; its DRAM timing stays.
        for key in ("capacity_bytes", "sharing", "shares", "precondition"):
            doc["cache"].pop(key, None)


def _occupancy(conv: _Conv, doc: dict, flows: list[dict]) -> None:
    """Initial_Occupancy_Percentage is per flow in MQSim (of the flow's share of the space);
    ssdkit's precondition.occupancy is one fraction of the whole space: the flows' mean, as
    they split the space equally."""
    occ = [f.pop("_occupancy") for f in flows if "_occupancy" in f]
    if not occ:
        return
    pcts = [o[0] for o in occ]
    given = " ".join(f"<{path}> = {pct}" for pct, path in occ)
    if not any(pcts):
        # MQSim preconditions nothing: the device starts empty.
        doc["precondition"] = {"mode": "empty"}
        conv.sources["precondition.mode"] = given
        return
    doc["precondition"] = dict(doc["precondition"])
    doc["precondition"]["occupancy"] = sum(pcts) / len(pcts) / 100
    conv.sources["precondition.occupancy"] = given
    if len(set(pcts)) > 1 or len(pcts) < len(flows):
        conv.approx(
            occ[0][1],
            pcts[0],
            f"the flows occupy {pcts} % of their shares; precondition.occupancy is one fraction of the whole "
            f"space, set to their mean over the {len(flows)} flows' equal shares (flows without the key count "
            "as the mean)",
        )


def _priorities(conv: _Conv, doc: dict, flows: list[dict], prios: list, facts: dict) -> None:
    classes = {p for p, _ in prios}
    if len(classes) <= 1:
        return  # one class for every flow: arbitration among equals, as round robin
    given = [(p, path) for p, path in prios if p is not None]
    if facts["kind"] != "NVME":
        for p, path in given:
            conv.unmapped(
                f"{path}/Priority_Class", p, "NVMe only: no effect with HostInterface_Type SATA", cause="no_effect"
            )
        return
    if facts["tsp"] == "OUT_OF_ORDER":
        for p, path in given:
            conv.unmapped(
                f"{path}/Priority_Class",
                p,
                "no effect with Transaction_Scheduling_Policy OUT_OF_ORDER (MQSim uses the classes in "
                "PRIORITY_OUT_OF_ORDER); left at the default",
                cause="no_effect",
            )
        return
    if facts["tsp"] in ("PRIORITY_OUT_OF_ORDER", "FLIN"):
        # The classes go to the die queues, as in MQSim (tsu.policy set with the device).
        for (p, _path), f in zip(prios, flows):
            f["priority"] = (p or "MEDIUM").lower()
        return


def _finish(
    k: int,
    n: int,
    doc: dict,
    entries: list[Unmapped],
    sources: dict,
    cap: int,
    label: str,
    wlabel: str | None,
    ov: list[str],
    apply_overrides: bool,
    mqsim_compat: bool = False,
) -> MqsimScenario:
    if mqsim_compat:
        _apply_compat(doc)
    if apply_overrides and ov:
        apply_override_list(doc, ov)
        if mqsim_compat:
            _drop_inapplicable_compat(doc, ov)
    header = [
        f"Converted by ssdkit from MQSim's {label}" + (f" and {wlabel}, scenario {k} of {n}" if wlabel else "") + ".",
        "MQSim runs each scenario on a fresh device; so does each ssdkit run of this file.",
        f"Logical capacity {cap} bytes; the flows of the scenario split it equally.",
    ]
    if not wlabel:
        header.append("No workload.xml: add [[flow]] tables (or use this file as the device for --fio).")
    header += HOST_SIDE_LINES
    if mqsim_compat:
        header.append("MQSim behaviours on (--mqsim-compat):")
        header += compat_lines()
    if apply_overrides and ov:
        header.append("Overrides applied: " + " ".join(ov))
    # Most consequential first, here, in the CLI's warning and in MqsimScenario.unmapped.
    rank = {c: i for i, c in enumerate(CAUSES)}
    entries = sorted(entries, key=lambda e: rank[e.cause])
    n = sum(len(es) for _, es in group_by_cause(entries))
    if n:
        header.append(f"{n} MQSim parameters are not reproduced exactly; by cause, most consequential first:")
        header += warning_lines(entries)
    return MqsimScenario(
        index=k, toml=toml_dumps(doc, header), doc=doc, unmapped=entries, capacity_bytes=cap, sources=sources
    )


def mqsim_to_toml(
    ssdconfig: PathArg,
    workload: PathArg | None = None,
    *,
    scenario: int | None = None,
    trace_dir: PathArg | None = None,
    overrides: Any = None,
) -> str:
    """The TOML of one scenario (1-based ``scenario``; may be omitted when there is only one).
    See :func:`import_mqsim`."""
    scs = import_mqsim(ssdconfig, workload, trace_dir=trace_dir, overrides=overrides)
    return pick_scenario(scs, scenario, "workload.xml").toml


def pick_scenario(scs: list[MqsimScenario], scenario: int | None, label: str) -> MqsimScenario:
    if scenario is None:
        if len(scs) > 1:
            raise MqsimError(
                f"{label} has {len(scs)} scenarios; pick one with --scenario 1..{len(scs)} "
                "(MQSim runs each on a fresh device)"
            )
        return scs[0]
    if scs[0].index == 0:
        raise MqsimError("--scenario needs workload.xml (the scenarios are its <IO_Scenario> elements)")
    if not 1 <= scenario <= len(scs):
        raise MqsimError(f"scenario {scenario} does not exist; {label} has {len(scs)} (1..{len(scs)})")
    return scs[scenario - 1]


def annotate(msg: str, sources: dict[str, str]) -> str:
    """Appends the MQSim origin of the ssdkit keys a core error message names."""
    extra = []
    for key in re.findall(r"`([a-z_][a-z0-9_.]*)`", msg):
        if key in sources and sources[key] not in extra:
            extra.append(sources[key])
    return msg + (f" (converted from {'; '.join(extra)})" if extra else "")


def validate(sc: MqsimScenario) -> None:
    """Loads the converted configuration in the core; errors name the MQSim element behind the
    ssdkit key."""
    doc = sc.doc if sc.doc.get("flow") else {**sc.doc, "flow": [{"requests": 1}]}
    try:
        _native.resolve_config(toml_text=toml_dumps(doc, []), origin="converted MQSim configuration")
    except ConfigError as e:
        raise MqsimError(annotate(str(e), sc.sources)) from None
