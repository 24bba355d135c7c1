//! `#[schema(…)]`: what the schema says beyond serde's form (validation,
//! Kubernetes' list and map semantics, CEL rules, defaults, descriptions).
//! Each item becomes an assignment to the schema node it is on.

use proc_macro2::TokenStream;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprArray, LitBool, LitFloat, LitInt, LitStr, Path, Token, Type};

/// One CEL rule (`x-kubernetes-validations`).
pub(crate) struct Rule {
    rule: String,
    message: Option<String>,
    message_expression: Option<String>,
    field_path: Option<String>,
    reason: Option<String>,
    optional_old_self: Option<bool>,
}

/// The items of the `#[schema(…)]` attributes on one container or field.
#[derive(Default)]
pub(crate) struct SchemaAttrs {
    /// Assignments to the node (`minimum`, `pattern`, …).
    settings: Vec<TokenStream>,
    rules: Vec<Rule>,
    /// A default value, a Rust expression serialized by serde.
    pub(crate) default: Option<Expr>,
    /// Another type whose schema this field takes.
    pub(crate) with: Option<Type>,
    /// A description replacing the doc comment.
    pub(crate) description: Option<String>,
    /// Where the runtime lives (`crate = "…"`, containers only).
    pub(crate) krate: Option<Path>,
}

fn float(meta: &ParseNestedMeta<'_>) -> syn::Result<f64> {
    let value: Expr = meta.value()?.parse()?;
    let (negative, literal) = match &value {
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => (true, &*unary.expr),
        other => (false, other),
    };
    let number = match literal {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse::<f64>()?,
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(float),
            ..
        }) => float.base10_parse::<f64>()?,
        _ => return Err(syn::Error::new_spanned(&value, "expected a number")),
    };
    Ok(if negative { -number } else { number })
}

fn strings(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<String>> {
    let array: ExprArray = meta.value()?.parse()?;
    array
        .elems
        .iter()
        .map(|element| match element {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Ok(text.value()),
            other => Err(syn::Error::new_spanned(other, "expected a string")),
        })
        .collect()
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

const LIST_TYPES: &[&str] = &["atomic", "set", "map"];
const MAP_TYPES: &[&str] = &["atomic", "granular"];
const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

impl SchemaAttrs {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<SchemaAttrs> {
        let mut out = SchemaAttrs::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("schema")) {
            attr.parse_nested_meta(|meta| out.item(&meta))?;
        }
        Ok(out)
    }

    fn item(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error("expected a schema item"));
        };
        let setting = match name.as_str() {
            "minimum" | "maximum" | "multiple_of" => {
                let field = syn::Ident::new(&name, meta.path.span());
                let value = float(meta)?;
                let literal = LitFloat::new(&format!("{value:?}f64"), meta.path.span());
                quote!(__schema.#field = ::core::option::Option::Some(#literal);)
            }
            "exclusive_minimum" | "exclusive_maximum" | "nullable" => {
                let field = syn::Ident::new(&name, meta.path.span());
                let value = flag(meta)?;
                quote!(__schema.#field = ::core::option::Option::Some(#value);)
            }
            "preserve_unknown_fields" | "embedded_resource" | "int_or_string" => {
                let field = syn::Ident::new(&format!("x_kubernetes_{name}"), meta.path.span());
                let value = flag(meta)?;
                quote!(__schema.#field = ::core::option::Option::Some(#value);)
            }
            "min_length" | "max_length" | "min_items" | "max_items" | "min_properties"
            | "max_properties" => {
                let field = syn::Ident::new(&name, meta.path.span());
                let value: LitInt = meta.value()?.parse()?;
                let value = value.base10_parse::<i64>()?;
                quote!(__schema.#field = ::core::option::Option::Some(#value);)
            }
            "pattern" | "format" => {
                let field = syn::Ident::new(&name, meta.path.span());
                let value: LitStr = meta.value()?.parse()?;
                quote!(__schema.#field = ::core::option::Option::Some(::std::string::String::from(#value));)
            }
            "list_type" | "map_type" => {
                let value: LitStr = meta.value()?.parse()?;
                let allowed = if name == "list_type" {
                    LIST_TYPES
                } else {
                    MAP_TYPES
                };
                if !allowed.contains(&value.value().as_str()) {
                    return Err(syn::Error::new_spanned(
                        &value,
                        format!("{name} is one of {allowed:?}"),
                    ));
                }
                let field = syn::Ident::new(&format!("x_kubernetes_{name}"), meta.path.span());
                quote!(__schema.#field = ::core::option::Option::Some(::std::string::String::from(#value));)
            }
            "list_map_keys" => {
                let keys = strings(meta)?;
                quote!(__schema.x_kubernetes_list_map_keys =
                    ::core::option::Option::Some(::std::vec![#(::std::string::String::from(#keys)),*]);)
            }
            "values" => {
                let array: ExprArray = meta.value()?.parse()?;
                let values = array.elems.iter();
                quote!(__schema.enum_ = ::core::option::Option::Some(::std::vec![#(
                    __private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON(
                        __private::serde_json::json!(#values))),*]);)
            }
            "rule" => {
                self.rules.push(Rule::parse(meta)?);
                return Ok(());
            }
            "default" => {
                self.default = Some(meta.value()?.parse()?);
                return Ok(());
            }
            "with" => {
                self.with = Some(meta.value()?.parse()?);
                return Ok(());
            }
            "description" => {
                self.description = Some(meta.value()?.parse::<LitStr>()?.value());
                return Ok(());
            }
            "crate" => {
                let path: LitStr = meta.value()?.parse()?;
                self.krate = Some(path.parse()?);
                return Ok(());
            }
            other => return Err(meta.error(format!("unknown schema item `{other}`"))),
        };
        self.settings.push(setting);
        Ok(())
    }

    /// Statements that apply these items to `__schema` (a
    /// `JSONSchemaProps` in scope, with `__private` imported).
    pub(crate) fn apply(&self) -> TokenStream {
        let settings = &self.settings;
        let rules = self.rules.iter().map(Rule::tokens);
        let description = self.description.as_ref().map(|text| {
            quote!(__schema.description = ::core::option::Option::Some(::std::string::String::from(#text));)
        });
        let default = self
            .default
            .as_ref()
            .map(|value| default_tokens(&quote!(&(#value))));
        quote! {
            #(#settings)*
            #description
            #(__schema.x_kubernetes_validations.get_or_insert_with(::std::vec::Vec::new).push(#rules);)*
            #default
        }
    }
}

/// Statements setting `__schema.default` to `value` serialized, unless
/// it serializes to null (an `Option`'s `None`) or fails.
pub(crate) fn default_tokens(value: &TokenStream) -> TokenStream {
    quote! {
        if let ::core::result::Result::Ok(__value) = __private::serde_json::to_value(#value) {
            if !__value.is_null() {
                __schema.default = ::core::option::Option::Some(
                    __private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON(__value),
                );
            }
        }
    }
}

impl Rule {
    /// `rule = "…"` or `rule(rule = "…", message = "…", …)`.
    fn parse(meta: &ParseNestedMeta<'_>) -> syn::Result<Rule> {
        let mut rule = Rule {
            rule: String::new(),
            message: None,
            message_expression: None,
            field_path: None,
            reason: None,
            optional_old_self: None,
        };
        if meta.input.peek(Token![=]) {
            rule.rule = meta.value()?.parse::<LitStr>()?.value();
            return Ok(rule);
        }
        meta.parse_nested_meta(|inner| {
            let text = |inner: &ParseNestedMeta<'_>| -> syn::Result<String> { Ok(inner.value()?.parse::<LitStr>()?.value()) };
            if inner.path.is_ident("rule") {
                rule.rule = text(&inner)?;
            } else if inner.path.is_ident("message") {
                let message = text(&inner)?;
                if message.contains('\n') {
                    return Err(inner.error("the API server refuses a message with line breaks"));
                }
                rule.message = Some(message);
            } else if inner.path.is_ident("message_expression") {
                rule.message_expression = Some(text(&inner)?);
            } else if inner.path.is_ident("field_path") {
                let path = text(&inner)?;
                if !path.starts_with('.') && !path.starts_with('[') {
                    return Err(inner.error("a field path starts with `.` or `[` (`.spec.replicas`)"));
                }
                rule.field_path = Some(path);
            } else if inner.path.is_ident("reason") {
                let reason = text(&inner)?;
                if !REASONS.contains(&reason.as_str()) {
                    return Err(inner.error(format!("reason is one of {REASONS:?}")));
                }
                rule.reason = Some(reason);
            } else if inner.path.is_ident("optional_old_self") {
                rule.optional_old_self = Some(flag(&inner)?);
            } else {
                return Err(inner.error("a rule has rule, message, message_expression, field_path, reason, optional_old_self"));
            }
            Ok(())
        })?;
        if rule.rule.is_empty() {
            return Err(meta.error("a rule needs `rule = \"<CEL expression>\"`"));
        }
        Ok(rule)
    }

    fn tokens(&self) -> TokenStream {
        let option = |value: &Option<String>| match value {
            Some(text) => quote!(::core::option::Option::Some(::std::string::String::from(#text))),
            None => quote!(::core::option::Option::None),
        };
        let rule = &self.rule;
        let message = option(&self.message);
        let message_expression = option(&self.message_expression);
        let field_path = option(&self.field_path);
        let reason = option(&self.reason);
        let optional_old_self = match self.optional_old_self {
            Some(value) => quote!(::core::option::Option::Some(#value)),
            None => quote!(::core::option::Option::None),
        };
        quote! {
            __private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule {
                rule: ::std::string::String::from(#rule),
                message: #message,
                message_expression: #message_expression,
                field_path: #field_path,
                reason: #reason,
                optional_old_self: #optional_old_self,
            }
        }
    }
}
