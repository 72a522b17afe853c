//! `#[ranges]`: the allowed values of a configuration key, declared once, next to its field.
//!
//! On a struct or enum of ssdkit-core's configuration, each field may carry
//! `#[range(...)]`:
//!
//! ```text
//! #[range(min = 1, max = 256)]              integers min..=max
//! #[range(gt = 0.0, max = 1e5)]             numbers in (0, 1e5]; `lt` for an open upper end
//! #[range(pow2, min = 8, max = 4096)]       a power of two in 8..=4096
//! #[range(one_of = [8, 16])]                a listed value (`what = "a PCIe link width"`)
//! #[range(or_zero, min = 1e-6, max = 1e12)] 0 (unset), or in the range
//! #[range(..., note = "0: no limit")]       said after the range in the message
//! #[range(nested)]                          a section (struct, Vec or Option of one) to visit
//! ```
//!
//! A bound is any expression (`u32::MAX as u64`, a constant). Options and lists of numbers are
//! checked value by value. The attribute turns each declaration into (a) the field's JSON
//! Schema bounds (`schema_with`: minimum, maximum, exclusiveMinimum, enum) and (b) an
//! implementation of `crate::config::ranges::Ranged` whose `check_ranges` checks the fields in
//! declaration order and names each by its key path (serde names). Fields of an enum's struct
//! variants are declared the same way; with `#[serde(tag = ...)]` they sit in the table of the
//! enum's key, otherwise under the variant's name. A newtype variant (`Flin(FlinConfig)`)
//! hands its value to the inner type's own `#[ranges]`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{parse_macro_input, Attribute, Data, DeriveInput, Expr, Fields, LitStr};

#[proc_macro_attribute]
pub fn ranges(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut input = parse_macro_input!(item as DeriveInput);
    match expand(&mut input) {
        Ok(extra) => quote!(#input #extra).into(),
        Err(e) => {
            let e = e.to_compile_error();
            quote!(#input #e).into()
        }
    }
}

/// One field's declaration, as written.
#[derive(Default)]
struct Decl {
    nested: bool,
    calls: Vec<Tokens>,
}

fn parse_decl(attr: &Attribute) -> syn::Result<Decl> {
    let mut d = Decl::default();
    attr.parse_nested_meta(|meta| {
        let name = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match name.as_str() {
            "nested" => d.nested = true,
            "pow2" => d.calls.push(quote!(.pow2())),
            "or_zero" => d.calls.push(quote!(.or_zero())),
            "min" | "max" | "gt" | "lt" => {
                let e: Expr = meta.value()?.parse()?;
                let m = format_ident!("{}", name);
                d.calls.push(quote!(.#m(#e)));
            }
            "one_of" => {
                let e: Expr = meta.value()?.parse()?;
                d.calls.push(quote!(.one_of(#e)));
            }
            "what" | "note" => {
                let s: LitStr = meta.value()?.parse()?;
                let m = format_ident!("{}", name);
                d.calls.push(quote!(.#m(#s)));
            }
            _ => return Err(meta.error("unknown item in #[range(...)]")),
        }
        Ok(())
    })?;
    if d.nested && !d.calls.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "#[range(nested)] takes no bounds: declare them in the nested type",
        ));
    }
    Ok(d)
}

/// The serde attribute `key = "value"` among `attrs`, if any.
fn serde_str(attrs: &[Attribute], key: &str) -> Option<String> {
    let mut out = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                let s: LitStr = meta.value()?.parse()?;
                out = Some(s.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|m| {
                    if m.input.peek(syn::Token![=]) {
                        let _: Expr = m.value()?.parse()?;
                    }
                    Ok(())
                });
            }
            Ok(())
        });
    }
    out
}

fn snake(s: &str) -> String {
    let mut o = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            o.push('_');
        }
        o.extend(c.to_lowercase());
    }
    o
}

/// Takes the `#[range]` attributes off the fields, adds their `schema_with`, and returns the
/// schema functions and the `Ranged` implementation.
fn expand(input: &mut DeriveInput) -> syn::Result<Tokens> {
    let ty = input.ident.clone();
    let mut fns = Tokens::new();
    let body = match &mut input.data {
        Data::Struct(s) => {
            let checks = fields(&ty, &mut s.fields, &mut fns, |f| quote!(&self.#f), None)?;
            quote!(#(#checks)*)
        }
        Data::Enum(e) => {
            let tagged = serde_str(&input.attrs, "tag").is_some();
            let rename_all = serde_str(&input.attrs, "rename_all");
            let mut arms = Vec::new();
            for v in e.variants.iter_mut() {
                let vname = v.ident.clone();
                let key = serde_str(&v.attrs, "rename").unwrap_or_else(|| {
                    let n = vname.to_string();
                    match rename_all.as_deref() {
                        Some("snake_case") => snake(&n),
                        Some("lowercase") => n.to_lowercase(),
                        _ => n,
                    }
                });
                // A newtype variant's struct holds the keys: in the enum's own table when it
                // is tagged, else under the variant's name.
                if let Fields::Unnamed(u) = &v.fields {
                    if u.unnamed.len() == 1 {
                        let at = if tagged {
                            quote!(path)
                        } else {
                            quote!(&crate::config::ranges::key(path, #key))
                        };
                        arms.push(quote!(
                            Self::#vname(inner) => crate::config::ranges::Ranged::check_ranges(inner, #at)?,
                        ));
                    }
                    continue;
                }
                let prefix = if tagged { None } else { Some(key) };
                let Fields::Named(_) = &v.fields else {
                    continue;
                };
                let names: Vec<_> = v
                    .fields
                    .iter()
                    .map(|f| f.ident.clone().expect("named"))
                    .collect();
                let checks = fields(
                    &format_ident!("{}_{}", ty, vname),
                    &mut v.fields,
                    &mut fns,
                    |f| quote!(#f),
                    prefix.as_deref(),
                )?;
                if !checks.is_empty() {
                    arms.push(quote!(Self::#vname { #(#names),* } => { #(#checks)* }));
                }
            }
            quote!(
                #[allow(unused_variables)]
                match self { #(#arms)* _ => {} }
            )
        }
        Data::Union(u) => {
            return Err(syn::Error::new_spanned(
                u.union_token,
                "#[ranges] takes a struct or an enum",
            ))
        }
    };
    Ok(quote! {
        #fns
        impl crate::config::ranges::Ranged for #ty {
            fn check_ranges(&self, path: &str) -> ::std::result::Result<(), ::std::string::String> {
                #body
                Ok(())
            }
        }
    })
}

fn fields(
    owner: &syn::Ident,
    fields: &mut Fields,
    fns: &mut Tokens,
    access: impl Fn(&syn::Ident) -> Tokens,
    prefix: Option<&str>,
) -> syn::Result<Vec<Tokens>> {
    let mut checks = Vec::new();
    for f in fields.iter_mut() {
        let Some(pos) = f.attrs.iter().position(|a| a.path().is_ident("range")) else {
            continue;
        };
        let attr = f.attrs.remove(pos);
        if let Some(extra) = f.attrs.iter().find(|a| a.path().is_ident("range")) {
            return Err(syn::Error::new_spanned(extra, "one #[range] per field"));
        }
        let decl = parse_decl(&attr)?;
        let ident = f
            .ident
            .clone()
            .ok_or_else(|| syn::Error::new_spanned(&attr, "#[range] needs a named field"))?;
        let name = serde_str(&f.attrs, "rename")
            .unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_string());
        let name = match prefix {
            Some(p) => format!("{p}.{name}"),
            None => name,
        };
        let value = access(&ident);
        if decl.nested {
            checks.push(quote!(
                crate::config::ranges::Ranged::check_ranges(#value, &crate::config::ranges::key(path, #name))?;
            ));
            continue;
        }
        let calls = &decl.calls;
        let range_fn = format_ident!("__range_{}_{}", owner, ident);
        let schema_fn = format_ident!("__range_schema_{}_{}", owner, ident);
        let fty = &f.ty;
        fns.extend(quote! {
            #[allow(non_snake_case)]
            fn #range_fn() -> crate::config::ranges::Range {
                crate::config::ranges::Range::new() #(#calls)*
            }
            #[allow(non_snake_case)]
            fn #schema_fn(g: &mut ::schemars::gen::SchemaGenerator) -> ::schemars::schema::Schema {
                crate::config::ranges::schema(<#fty as ::schemars::JsonSchema>::json_schema(g), &#range_fn())
            }
        });
        let path_lit = schema_fn.to_string();
        f.attrs
            .push(syn::parse_quote!(#[schemars(schema_with = #path_lit)]));
        checks.push(quote!(
            crate::config::ranges::Value::check(#value, &crate::config::ranges::key(path, #name), &#range_fn())?;
        ));
    }
    Ok(checks)
}
