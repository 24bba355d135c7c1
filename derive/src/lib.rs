//! `#[derive(CustomResource)]` and `#[derive(Schema)]` for clientgo-rs.
//! Use them through `clientgo::crd` (feature `derive`), whose
//! documentation is the guide: this crate only expands the attributes
//! into code against that module.

mod case;
mod custom_resource;
mod resource_attrs;
mod schema_attrs;
mod schema_derive;
mod serde_attrs;

use proc_macro::TokenStream;

/// One version of a custom resource from its spec struct: the root type
/// (`metadata`, `spec`, `status`), its `Schema`, k8s-openapi's `Resource`
/// and `Metadata`, and `CustomResource::crd()`. The attributes are
/// documented in `clientgo::crd`.
#[proc_macro_derive(CustomResource, attributes(resource, schema))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    custom_resource::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The structural schema of a struct or enum as serde writes it. The
/// attributes are documented in `clientgo::crd`.
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let krate = match schema_attrs::SchemaAttrs::parse(&input.attrs) {
        Ok(attrs) => attrs
            .krate
            .unwrap_or_else(|| syn::parse_quote!(::clientgo::crd)),
        Err(error) => return error.into_compile_error().into(),
    };
    schema_derive::expand(&input, &krate)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
