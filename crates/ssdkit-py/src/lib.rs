use pyo3::prelude::*; #[pymodule] fn _native(_m: &Bound<'_, PyModule>) -> PyResult<()> { Ok(()) }
