//! `#[resource(…)]`: the custom resource's identity and its CRD's parts.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitBool, LitInt, LitStr, Path, Token};

/// One `printer_column(…)`.
pub(crate) struct PrinterColumn {
    pub(crate) name: String,
    pub(crate) type_: String,
    pub(crate) json_path: String,
    pub(crate) description: Option<String>,
    pub(crate) format: Option<String>,
    pub(crate) priority: Option<i32>,
}

/// The scale subresource's paths.
pub(crate) struct Scale {
    pub(crate) spec_replicas_path: String,
    pub(crate) status_replicas_path: String,
    pub(crate) label_selector_path: Option<String>,
}

/// Everything `#[resource(…)]` says.
pub(crate) struct ResourceAttrs {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) namespaced: bool,
    pub(crate) root: Ident,
    pub(crate) status: Option<syn::Type>,
    pub(crate) scale: Option<Scale>,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    pub(crate) printer_columns: Vec<PrinterColumn>,
    pub(crate) selectable_fields: Vec<String>,
    pub(crate) deprecated: bool,
    pub(crate) deprecation_warning: Option<String>,
    pub(crate) served: bool,
    pub(crate) derives: Vec<Path>,
    pub(crate) krate: Option<Path>,
}

const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

fn text(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    Ok(meta.value()?.parse::<LitStr>()?.value())
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// A plural as Kubernetes spells them: lowercase, English rules.
fn plural_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let consonant_y = lower.ends_with('y')
        && !matches!(
            lower.chars().rev().nth(1),
            Some('a' | 'e' | 'i' | 'o' | 'u')
        );
    if consonant_y {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

impl ResourceAttrs {
    pub(crate) fn parse(attrs: &[Attribute], span: Span) -> syn::Result<ResourceAttrs> {
        let mut group = None;
        let mut version = None;
        let mut kind = None;
        let mut plural = None;
        let mut singular = None;
        let mut root = None;
        let mut out = ResourceAttrs {
            group: String::new(),
            version: String::new(),
            kind: String::new(),
            plural: String::new(),
            singular: String::new(),
            namespaced: false,
            root: Ident::new("Unnamed", span),
            status: None,
            scale: None,
            short_names: Vec::new(),
            categories: Vec::new(),
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
            deprecated: false,
            deprecation_warning: None,
            served: true,
            derives: Vec::new(),
            krate: None,
        };
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("resource")) {
            attr.parse_nested_meta(|meta| {
                let name = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                match name.as_str() {
                    "group" => group = Some(text(&meta)?),
                    "version" => version = Some(text(&meta)?),
                    "kind" => kind = Some(text(&meta)?),
                    "plural" => plural = Some(text(&meta)?),
                    "singular" => singular = Some(text(&meta)?),
                    "namespaced" => out.namespaced = flag(&meta)?,
                    "root" => root = Some(meta.value()?.parse::<LitStr>()?.parse::<Ident>()?),
                    "status" => out.status = Some(meta.value()?.parse::<LitStr>()?.parse()?),
                    "short_name" => out.short_names.push(text(&meta)?),
                    "category" => out.categories.push(text(&meta)?),
                    "selectable_field" => {
                        let path = text(&meta)?;
                        if !path.starts_with('.') {
                            return Err(meta.error("a selectable field is a path from the root starting with `.` (`.spec.color`)"));
                        }
                        out.selectable_fields.push(path);
                    }
                    "deprecated" => {
                        out.deprecated = true;
                        if meta.input.peek(Token![=]) {
                            out.deprecation_warning = Some(text(&meta)?);
                        }
                    }
                    "served" => out.served = flag(&meta)?,
                    "derive" => out.derives.push(meta.value()?.parse::<LitStr>()?.parse()?),
                    "crate" => out.krate = Some(meta.value()?.parse::<LitStr>()?.parse()?),
                    "scale" => out.scale = Some(parse_scale(&meta)?),
                    "printer_column" => out.printer_columns.push(parse_column(&meta)?),
                    other => return Err(meta.error(format!("unknown resource item `{other}`"))),
                }
                Ok(())
            })?;
        }
        let missing =
            |what: &str| syn::Error::new(span, format!("#[resource(…)] needs `{what} = \"…\"`"));
        out.group = group.ok_or_else(|| missing("group"))?;
        out.version = version.ok_or_else(|| missing("version"))?;
        out.kind = kind.ok_or_else(|| missing("kind"))?;
        out.plural = plural.unwrap_or_else(|| plural_of(&out.kind));
        out.singular = singular.unwrap_or_else(|| out.kind.to_ascii_lowercase());
        out.root = root.unwrap_or_else(|| Ident::new(&out.kind, span));
        if out.plural.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(syn::Error::new(
                span,
                "the API server needs a lowercase plural",
            ));
        }
        Ok(out)
    }
}

fn parse_scale(meta: &ParseNestedMeta<'_>) -> syn::Result<Scale> {
    let mut scale = Scale {
        spec_replicas_path: ".spec.replicas".into(),
        status_replicas_path: ".status.replicas".into(),
        label_selector_path: None,
    };
    if !meta.input.peek(syn::token::Paren) {
        return Ok(scale);
    }
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("spec_replicas_path") {
            scale.spec_replicas_path = text(&inner)?;
        } else if inner.path.is_ident("status_replicas_path") {
            scale.status_replicas_path = text(&inner)?;
        } else if inner.path.is_ident("label_selector_path") {
            scale.label_selector_path = Some(text(&inner)?);
        } else {
            return Err(inner
                .error("scale has spec_replicas_path, status_replicas_path, label_selector_path"));
        }
        Ok(())
    })?;
    Ok(scale)
}

fn parse_column(meta: &ParseNestedMeta<'_>) -> syn::Result<PrinterColumn> {
    let mut column = PrinterColumn {
        name: String::new(),
        type_: String::new(),
        json_path: String::new(),
        description: None,
        format: None,
        priority: None,
    };
    meta.parse_nested_meta(|inner| {
        let name = inner
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match name.as_str() {
            "name" => column.name = text(&inner)?,
            "type" | "type_" => {
                column.type_ = text(&inner)?;
                if !COLUMN_TYPES.contains(&column.type_.as_str()) {
                    return Err(inner.error(format!(
                        "a printer column's type is one of {COLUMN_TYPES:?}"
                    )));
                }
            }
            "json_path" => column.json_path = text(&inner)?,
            "description" => column.description = Some(text(&inner)?),
            "format" => column.format = Some(text(&inner)?),
            "priority" => column.priority = Some(inner.value()?.parse::<LitInt>()?.base10_parse()?),
            _ => {
                return Err(inner.error(
                    "a printer column has name, type, json_path, description, format, priority",
                ));
            }
        }
        Ok(())
    })?;
    if column.name.is_empty() || column.json_path.is_empty() {
        return Err(meta.error("a printer column needs name and json_path (its type comes from the schema unless given)"));
    }
    Ok(column)
}

#[cfg(test)]
mod tests {
    use super::plural_of;

    #[test]
    fn plurals() {
        for (kind, plural) in [
            ("CronTab", "crontabs"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
        ] {
            assert_eq!(plural_of(kind), plural);
        }
    }
}
