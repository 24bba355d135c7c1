//! What serde's attributes say about a type's JSON form: the parts the
//! schema must follow. Attributes that do not change the JSON form
//! (`alias`, `bound`, `borrow`, …) are read past.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Path, Token};

use crate::case::RenameRule;

/// A container's (struct's or enum's) serde attributes.
#[derive(Default)]
pub(crate) struct Container {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) rename_all_fields: Option<RenameRule>,
    pub(crate) tag: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) untagged: bool,
    pub(crate) transparent: bool,
    /// `default` (`None` inside: the type's `Default`) or `default = "path"`.
    pub(crate) default: Option<Option<Path>>,
}

/// A field's serde attributes.
#[derive(Default)]
pub(crate) struct Field {
    pub(crate) rename: Option<String>,
    /// `default` (`None` inside: the type's `Default`) or `default = "path"`.
    pub(crate) default: Option<Option<Path>>,
    pub(crate) skip: bool,
    pub(crate) skip_serializing: bool,
    pub(crate) skip_serializing_if: bool,
    pub(crate) flatten: bool,
    /// `with`, `serialize_with` or `deserialize_with`: the JSON form is
    /// the function's, not the type's.
    pub(crate) custom_with: bool,
}

/// A variant's serde attributes.
#[derive(Default)]
pub(crate) struct Variant {
    pub(crate) rename: Option<String>,
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) skip: bool,
    pub(crate) untagged: bool,
    pub(crate) other: bool,
}

fn serde_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|attr| attr.path().is_ident("serde"))
}

/// A string value (`= "…"`), or the serialize side of `(serialize = "…",
/// deserialize = "…")`.
fn string_value(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    if meta.input.peek(Token![=]) {
        let value: LitStr = meta.value()?.parse()?;
        return Ok(value.value());
    }
    let mut serialize = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            serialize = Some(inner.value()?.parse::<LitStr>()?.value());
        } else {
            skip(&inner)?;
        }
        Ok(())
    })?;
    serialize.ok_or_else(|| meta.error("expected a `serialize = \"…\"` name"))
}

fn rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<RenameRule> {
    let name = string_value(meta)?;
    RenameRule::parse(&name).ok_or_else(|| meta.error(format!("serde has no rename rule {name:?}")))
}

/// serde's `default` (`None`: the type's `Default`) or `default =
/// "path"` (`Some(path)`).
fn default_function(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Path>> {
    if meta.input.peek(Token![=]) {
        let function: LitStr = meta.value()?.parse()?;
        return Ok(Some(function.parse()?));
    }
    Ok(None)
}

/// Reads past an attribute this derive does not need.
pub(crate) fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip(&inner))?;
    }
    Ok(())
}

impl Container {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Container> {
        let mut out = Container::default();
        for attr in serde_attrs(attrs) {
            attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename_all") {
                    out.rename_all = Some(rename_rule(&meta)?);
                } else if path.is_ident("rename_all_fields") {
                    out.rename_all_fields = Some(rename_rule(&meta)?);
                } else if path.is_ident("tag") {
                    out.tag = Some(string_value(&meta)?);
                } else if path.is_ident("content") {
                    out.content = Some(string_value(&meta)?);
                } else if path.is_ident("untagged") {
                    out.untagged = true;
                } else if path.is_ident("transparent") {
                    out.transparent = true;
                } else if path.is_ident("default") {
                    out.default = Some(default_function(&meta)?);
                } else {
                    skip(&meta)?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}

impl Field {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Field> {
        let mut out = Field::default();
        for attr in serde_attrs(attrs) {
            attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    out.rename = Some(string_value(&meta)?);
                } else if path.is_ident("default") {
                    out.default = Some(default_function(&meta)?);
                } else if path.is_ident("skip") {
                    out.skip = true;
                } else if path.is_ident("skip_serializing") {
                    out.skip_serializing = true;
                } else if path.is_ident("skip_serializing_if") {
                    out.skip_serializing_if = true;
                    skip(&meta)?;
                } else if path.is_ident("flatten") {
                    out.flatten = true;
                } else if path.is_ident("with")
                    || path.is_ident("serialize_with")
                    || path.is_ident("deserialize_with")
                {
                    out.custom_with = true;
                    skip(&meta)?;
                } else {
                    skip(&meta)?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}

impl Variant {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Variant> {
        let mut out = Variant::default();
        for attr in serde_attrs(attrs) {
            attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    out.rename = Some(string_value(&meta)?);
                } else if path.is_ident("rename_all") {
                    out.rename_all = Some(rename_rule(&meta)?);
                } else if path.is_ident("skip") || path.is_ident("skip_serializing") {
                    out.skip = true;
                } else if path.is_ident("untagged") {
                    out.untagged = true;
                } else if path.is_ident("other") {
                    out.other = true;
                } else {
                    skip(&meta)?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}

/// The doc comment of an item, lines joined, or `None`.
pub(crate) fn doc(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("doc")) {
        if let syn::Meta::NameValue(pair) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &pair.value
        {
            let line = text.value();
            lines.push(
                line.strip_prefix(' ')
                    .unwrap_or(&line)
                    .trim_end()
                    .to_owned(),
            );
        }
    }
    // Paragraphs keep their breaks; lines within one are joined.
    let mut text = String::new();
    for line in lines {
        if line.is_empty() {
            if !text.ends_with("\n\n") && !text.is_empty() {
                text.push_str("\n\n");
            }
        } else {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push(' ');
            }
            text.push_str(&line);
        }
    }
    let text = text.trim().to_owned();
    (!text.is_empty()).then_some(text)
}
