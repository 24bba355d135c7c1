//! `#[derive(Schema)]`: the impl of `Schema` for a struct or enum, from
//! its serde attributes, doc comments and `#[schema(…)]` items.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Path, Type};

use crate::case::RenameRule;
use crate::schema_attrs::{SchemaAttrs, default_tokens};
use crate::serde_attrs::{self, doc};

/// The impl of `Schema` for `input`, against the runtime at `krate`.
pub(crate) fn expand(input: &DeriveInput, krate: &Path) -> syn::Result<TokenStream> {
    let container = serde_attrs::Container::parse(&input.attrs)?;
    let attrs = SchemaAttrs::parse(&input.attrs)?;
    let description = attrs.description.clone().or_else(|| doc(&input.attrs));
    let mut bounds: Vec<syn::WherePredicate> = Vec::new();
    let (body, optional) = match &input.data {
        Data::Struct(data) => struct_body(
            krate,
            &container,
            &data.fields,
            description.as_deref(),
            input,
            &mut bounds,
        )?,
        Data::Enum(data) => (
            enum_body(krate, &container, data, description.as_deref(), &mut bounds)?,
            None,
        ),
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "serde does not derive for unions",
            ));
        }
    };
    let apply = attrs.apply();
    let name = &input.ident;
    let mut generics = input.generics.clone();
    for parameter in generics.type_params_mut() {
        parameter.bounds.push(syn::parse_quote!(#krate::Schema));
    }
    if !bounds.is_empty() {
        generics.make_where_clause().predicates.extend(bounds);
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    let optional =
        optional.map(|ty| quote!(const OPTIONAL: bool = <#ty as #krate::Schema>::OPTIONAL;));
    Ok(quote! {
        impl #impl_generics #krate::Schema for #name #type_generics #where_clause {
            #optional

            fn schema(
                __generator: &mut #krate::Generator,
            ) -> #krate::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps {
                #[allow(unused_imports)]
                use #krate::__private;
                let mut __schema = { #body };
                #apply
                __schema
            }
        }
    })
}

fn option_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

/// A struct's schema, and for a newtype or transparent struct the inner
/// type (whose `OPTIONAL` it shares).
fn struct_body(
    krate: &Path,
    container: &serde_attrs::Container,
    fields: &Fields,
    description: Option<&str>,
    input: &DeriveInput,
    bounds: &mut Vec<syn::WherePredicate>,
) -> syn::Result<(TokenStream, Option<Type>)> {
    let mut kept: Vec<&syn::Field> = Vec::new();
    for field in fields {
        if !serde_attrs::Field::parse(&field.attrs)?.skip {
            kept.push(field);
        }
    }
    let describe = description.map(|text| quote!(__schema.description = ::core::option::Option::Some(::std::string::String::from(#text));));
    let single = |field: &syn::Field| -> syn::Result<(TokenStream, Option<Type>)> {
        let (schema, ty) = field_schema(field)?;
        let attrs = SchemaAttrs::parse(&field.attrs)?.apply();
        Ok((
            quote! {
                let mut __schema = { #schema };
                #attrs
                #describe
                __schema
            },
            Some(ty),
        ))
    };
    let transparent = container.transparent
        || matches!(fields, Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1);
    match fields {
        Fields::Unit => Err(syn::Error::new_spanned(
            &input.ident,
            "serde writes a unit struct as null, which the API server drops: give it a field, or make it an enum variant",
        )),
        _ if transparent => match kept.as_slice() {
            [field] => single(field),
            _ => Err(syn::Error::new_spanned(
                &input.ident,
                "a transparent struct has one field that is not skipped",
            )),
        },
        Fields::Named(named) => {
            let mut object = object_body(
                krate,
                named.named.iter(),
                container.rename_all,
                description,
                container.default.as_ref(),
                bounds,
            )?;
            // `#[serde(tag = "…")]` on a struct: serde writes its name there.
            if let Some(tag) = &container.tag {
                let value = input.ident.to_string();
                object = quote! {
                    let mut __object = { #object };
                    #krate::add_property(
                        &mut __object,
                        #tag,
                        __private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps {
                            enum_: ::core::option::Option::Some(::std::vec![
                                __private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSON(
                                    __private::serde_json::Value::from(#value))]),
                            ..#krate::typed("string")
                        },
                        true,
                    );
                    __object
                };
            }
            Ok((object, None))
        }
        Fields::Unnamed(_) => {
            let mut items = Vec::new();
            for field in &kept {
                let (schema, _) = field_schema(field)?;
                let attrs = SchemaAttrs::parse(&field.attrs)?.apply();
                items.push(quote!({ let mut __schema = { #schema }; #attrs __schema }));
            }
            Ok((
                quote! {
                    let mut __schema = #krate::tuple(&[#(#items),*]);
                    #describe
                    __schema
                },
                None,
            ))
        }
    }
}

/// The object schema of named fields. `container_default` is `Some` when
/// the struct has `#[serde(default)]` (`Some(None)`) or `#[serde(default
/// = "path")]`: a field without its own default takes that value's.
fn object_body<'a>(
    krate: &Path,
    fields: impl Iterator<Item = &'a syn::Field>,
    rename_all: Option<RenameRule>,
    description: Option<&str>,
    container_default: Option<&Option<Path>>,
    bounds: &mut Vec<syn::WherePredicate>,
) -> syn::Result<TokenStream> {
    let description = option_str(description);
    let mut statements = Vec::new();
    for field in fields {
        let serde = serde_attrs::Field::parse(&field.attrs)?;
        if serde.skip {
            continue;
        }
        let Some(ident) = &field.ident else { continue };
        let rust_name = ident.to_string();
        let rust_name = rust_name.strip_prefix("r#").unwrap_or(&rust_name);
        let wire = match (&serde.rename, rename_all) {
            (Some(name), _) => name.clone(),
            (None, Some(rule)) => rule.apply_to_field(rust_name),
            (None, None) => rust_name.to_owned(),
        };
        let (schema, ty) = field_schema(field)?;
        if serde.flatten {
            statements.push(quote! {
                #krate::flatten(&mut __object, { #schema }, <#ty as #krate::Schema>::OPTIONAL);
            });
            continue;
        }
        // With serde's `with`, the value's JSON form is the function's: a
        // default serialized from the Rust value would not be it, so only
        // `#[schema(default = …)]` gives one.
        let field_ty = &field.ty;
        let serde_default = match (&serde.default, serde.custom_with) {
            (_, true) => None,
            (Some(None), false) => {
                bounds.push(syn::parse_quote!(#field_ty: ::core::default::Default + #krate::__private::serde::Serialize));
                Some(default_tokens(
                    &quote!(&<#field_ty as ::core::default::Default>::default()),
                ))
            }
            (Some(Some(function)), false) => {
                bounds.push(syn::parse_quote!(#field_ty: #krate::__private::serde::Serialize));
                Some(default_tokens(&quote!(&#function())))
            }
            (None, false) => match container_default {
                Some(None) => {
                    bounds.push(syn::parse_quote!(Self: ::core::default::Default));
                    bounds.push(syn::parse_quote!(#field_ty: #krate::__private::serde::Serialize));
                    Some(default_tokens(
                        &quote!(&<Self as ::core::default::Default>::default().#ident),
                    ))
                }
                Some(Some(function)) => {
                    bounds.push(syn::parse_quote!(#field_ty: #krate::__private::serde::Serialize));
                    Some(default_tokens(&quote!(&#function().#ident)))
                }
                None => None,
            },
        };
        let optional = serde.default.is_some()
            || container_default.is_some()
            || serde.skip_serializing
            || serde.skip_serializing_if;
        // serde reads a missing `Option` as `None` unless `deserialize_with`
        // reads it, which needs the field.
        let required = if optional {
            quote!(false)
        } else if serde.custom_with {
            quote!(true)
        } else {
            quote!(!<#ty as #krate::Schema>::OPTIONAL)
        };
        // The field's own attributes come after serde's default, so a
        // `#[schema(default = …)]` wins.
        let attrs = SchemaAttrs::parse(&field.attrs)?.apply();
        statements.push(quote! {
            {
                let mut __schema = { #schema };
                #serde_default
                #attrs
                #krate::add_property(&mut __object, #wire, __schema, #required);
            }
        });
    }
    Ok(quote! {
        let mut __object = #krate::object(#description);
        #(#statements)*
        __object
    })
}

/// The schema of one field's value (its type's, or `#[schema(with)]`'s),
/// described by its doc, without the field's `#[schema]` items; and the
/// type it is of.
fn field_schema(field: &syn::Field) -> syn::Result<(TokenStream, Type)> {
    let serde = serde_attrs::Field::parse(&field.attrs)?;
    let attrs = SchemaAttrs::parse(&field.attrs)?;
    let ty = match attrs.with.clone() {
        Some(ty) => ty,
        None if serde.custom_with => {
            return Err(syn::Error::new(
                field.span(),
                "serde's `with` gives this field another JSON form: name a type of that form with `#[schema(with = Type)]`",
            ));
        }
        None => field.ty.clone(),
    };
    reject_wide_integers(&ty)?;
    let description = attrs
        .description
        .or_else(|| doc(&field.attrs))
        .map(|text| quote!(__schema.description = ::core::option::Option::Some(::std::string::String::from(#text));));
    Ok((
        quote! {
            let mut __schema = __generator.subschema::<#ty>();
            #description
            __schema
        },
        ty,
    ))
}

/// 128-bit integers have no schema the API server can hold; say so where
/// the field is, not in a trait error.
fn reject_wide_integers(ty: &Type) -> syn::Result<()> {
    let text = quote!(#ty).to_string();
    let wide = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|word| word == "u128" || word == "i128");
    if wide {
        return Err(syn::Error::new(
            ty.span(),
            "the API server keeps integers as 64-bit (it refuses larger ones as numbers): a 128-bit field cannot be stored; use i64/u64, or a String",
        ));
    }
    Ok(())
}

fn enum_body(
    krate: &Path,
    container: &serde_attrs::Container,
    data: &syn::DataEnum,
    description: Option<&str>,
    bounds: &mut Vec<syn::WherePredicate>,
) -> syn::Result<TokenStream> {
    let tagging = match (&container.tag, &container.content, container.untagged) {
        (_, _, true) => quote!(#krate::Tagging::Untagged),
        (Some(tag), Some(content), false) => {
            quote!(#krate::Tagging::Adjacent { tag: #tag, content: #content })
        }
        (Some(tag), None, false) => quote!(#krate::Tagging::Internal { tag: #tag }),
        (None, Some(_), false) => {
            return Err(syn::Error::new(
                data.enum_token.span,
                "serde's `content` needs a `tag`",
            ));
        }
        (None, None, false) => quote!(#krate::Tagging::External),
    };
    let mut variants = Vec::new();
    for variant in &data.variants {
        let serde = serde_attrs::Variant::parse(&variant.attrs)?;
        if serde.skip {
            continue;
        }
        if serde.untagged || serde.other {
            return Err(syn::Error::new_spanned(
                &variant.ident,
                "`#[serde(untagged)]` and `#[serde(other)]` on one variant have no structural schema: make the whole enum untagged, or drop the attribute",
            ));
        }
        let rust_name = variant.ident.to_string();
        let wire = match (&serde.rename, container.rename_all) {
            (Some(name), _) => name.clone(),
            (None, Some(rule)) => rule.apply_to_variant(&rust_name),
            (None, None) => rust_name,
        };
        let variant_doc = option_str(doc(&variant.attrs).as_deref());
        let payload = match &variant.fields {
            Fields::Unit if container.untagged => {
                return Err(syn::Error::new_spanned(
                    &variant.ident,
                    "serde writes an untagged unit variant as null, which the API server drops (a required field is then missing): give the variant a payload, or make the field an `Option`",
                ));
            }
            Fields::Unit => quote!(#krate::Payload::Unit),
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                let (schema, _) = field_schema(&fields.unnamed[0])?;
                let attrs = SchemaAttrs::parse(&fields.unnamed[0].attrs)?.apply();
                quote!(#krate::Payload::Value({ let mut __schema = { #schema }; #attrs __schema }))
            }
            Fields::Unnamed(fields) => {
                let mut items = Vec::new();
                for field in &fields.unnamed {
                    if serde_attrs::Field::parse(&field.attrs)?.skip {
                        continue;
                    }
                    let (schema, _) = field_schema(field)?;
                    let attrs = SchemaAttrs::parse(&field.attrs)?.apply();
                    items.push(quote!({ let mut __schema = { #schema }; #attrs __schema }));
                }
                quote!(#krate::Payload::Value(#krate::tuple(&[#(#items),*])))
            }
            Fields::Named(fields) => {
                let rule = serde.rename_all.or(container.rename_all_fields);
                let object = object_body(krate, fields.named.iter(), rule, None, None, bounds)?;
                quote!(#krate::Payload::Fields({ #object }))
            }
        };
        variants.push(quote! {
            #krate::Variant { name: #wire, description: #variant_doc, payload: #payload }
        });
    }
    let description = option_str(description);
    Ok(quote! {
        let __variants = ::std::vec![#(#variants),*];
        #krate::enum_schema(#description, #tagging, &__variants)
    })
}
