//! Generating the Rust source of typed informers, listers and factory
//! accessors from a list of [`Resource`]s.
//!
//! The source is written as text, then parsed with syn and printed with
//! prettyplease, so the output is formatted the same way on every machine
//! and a generator bug that would emit invalid Rust is caught here as an
//! error instead of in the user's build.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

use crate::error::Error;
use crate::k8s_openapi_versions::{cfg_name, first_minor_with};
use crate::model::{Resource, Stability};
use crate::naming::{accessor, group_modules, identifier};

/// Where the generated code will live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Inside clientgo-informers itself (the built-in types): paths start
    /// with `crate::`, the group accessors are inherent methods of
    /// `SharedInformerFactory`, and types that only later k8s-openapi
    /// versions have are put behind the `cfg`s clientgo-informers' build
    /// script sets.
    Informers,
    /// In the user's crate (custom resources): paths start with
    /// `informers_path` and the group accessors come from a trait of this
    /// name, implemented for `SharedInformerFactory`.
    External {
        /// The extension trait's name (`CronTabInformers`).
        trait_name: String,
        /// How the user's crate names clientgo-informers:
        /// [`DEFAULT_INFORMERS_PATH`], or `clientgo::informers` in a crate
        /// that depends on the `clientgo` crate alone.
        informers_path: String,
    },
}

/// How generated code names clientgo-informers unless told otherwise.
pub const DEFAULT_INFORMERS_PATH: &str = "clientgo_informers";

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// Where the code lives.
    pub target: Target,
    /// The command that regenerates it, quoted in every file's header.
    pub command: String,
    /// Also generate beta versions.
    pub include_beta: bool,
    /// Also generate alpha versions.
    pub include_alpha: bool,
}

impl GenerateOptions {
    fn wants(&self, resource: &Resource) -> bool {
        let stability_ok = match resource.stability() {
            Some(Stability::Ga) => true,
            Some(Stability::Beta) => self.include_beta,
            Some(Stability::Alpha) => self.include_alpha,
            None => false,
        };
        stability_ok && resource.is_watchable()
    }

    fn crate_path(&self) -> &str {
        match &self.target {
            Target::Informers => "crate",
            Target::External { informers_path, .. } => informers_path,
        }
    }

    /// The `#[cfg(feature = ..)]` line of a group's code: clientgo-informers
    /// has one cargo feature per API group, named after its module, so a
    /// user compiles only the groups they enable. Code generated for
    /// another crate has no such features.
    fn group_feature(&self, module: &str) -> String {
        match self.target {
            Target::Informers => format!("#[cfg(feature = {:?})]\n", file_stem(module)),
            Target::External { .. } => String::new(),
        }
    }

    /// The `#[cfg(..)]` line for code about `resources`, inside code
    /// already gated on `enclosing`: empty when every supported
    /// k8s-openapi version has one of them, or the enclosing gate already
    /// says as much.
    fn gate<'r>(
        &self,
        resources: impl IntoIterator<Item = &'r Resource>,
        enclosing: Option<u32>,
    ) -> String {
        if self.target != Target::Informers {
            return String::new();
        }
        match first_minor(resources) {
            Some(minor) if enclosing.is_none_or(|outer| minor > outer) => {
                format!("#[cfg({})]\n", cfg_name(minor))
            }
            _ => String::new(),
        }
    }
}

/// The first Kubernetes minor version whose k8s-openapi has one of
/// `resources`; `None` when the oldest supported one has one.
fn first_minor<'r>(resources: impl IntoIterator<Item = &'r Resource>) -> Option<u32> {
    let mut earliest: Option<u32> = None;
    for resource in resources {
        let minor = first_minor_with(&resource.type_path)?;
        earliest = Some(earliest.map_or(minor, |e| e.min(minor)));
    }
    earliest
}

/// One generated file: its path relative to the output directory, and its
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Relative path (`mod.rs`, `core/v1.rs`).
    pub path: PathBuf,
    /// The Rust source.
    pub contents: String,
}

/// The group's name in doc comments (`core` for the core group).
fn group_label(group: &str) -> &str {
    if group.is_empty() { "core" } else { group }
}

type ByGroup<'r> = BTreeMap<&'r str, BTreeMap<&'r str, Vec<&'r Resource>>>;

/// The files for `resources` (those that can be watched and whose version
/// the options include), sorted by path and formatted; the same input
/// always gives the same output. Fails only if the generated text is not
/// valid Rust (a kind or type path that is not a Rust name).
pub fn generate(
    resources: &[Resource],
    options: &GenerateOptions,
) -> Result<Vec<GeneratedFile>, Error> {
    let wanted: Vec<&Resource> = resources.iter().filter(|r| options.wants(r)).collect();
    check_clashes(&wanted)?;
    let mut by_group: ByGroup<'_> = BTreeMap::new();
    for resource in wanted {
        by_group
            .entry(resource.group.as_str())
            .or_default()
            .entry(resource.version.as_str())
            .or_default()
            .push(resource);
    }
    let modules = group_modules(by_group.keys().copied());
    let mut files = vec![root_file(&by_group, &modules, options)];
    for (group, versions) in &by_group {
        let module = &modules[*group];
        files.push(group_file(group, module, versions, options));
        for (version, resources) in versions {
            files.push(version_file(group, module, version, resources, options));
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
        .into_iter()
        .map(|file| format_file(file, options))
        .collect()
}

/// Two resources of one group/version with the same plural or kind would
/// give the same accessor or type names.
fn check_clashes(resources: &[&Resource]) -> Result<(), Error> {
    let mut seen: BTreeMap<(&str, &str, &str, String), &Resource> = BTreeMap::new();
    for resource in resources {
        let names = [
            ("plural", accessor(&resource.plural)),
            ("kind", resource.kind.clone()),
        ];
        for (what, name) in names {
            let key = (
                resource.group.as_str(),
                resource.version.as_str(),
                what,
                name,
            );
            if let Some(first) = seen.insert(key, resource) {
                return Err(Error::Clash {
                    first: format!("{first} ({})", first.type_path),
                    second: format!("{resource} ({})", resource.type_path),
                    problem: format!("the same group, version and {what}"),
                });
            }
        }
    }
    Ok(())
}

/// Formats `file` with prettyplease and puts the header on top.
fn format_file(file: GeneratedFile, options: &GenerateOptions) -> Result<GeneratedFile, Error> {
    let parsed = syn::parse_file(&file.contents).map_err(|error| Error::Generated {
        path: file.path.clone(),
        message: error.to_string(),
    })?;
    let mut contents = format!(
        "// Generated by clientgo-codegen; do not edit by hand.\n// Regenerate with: {}\n\n",
        options.command
    );
    contents.push_str(&space_items(&prettyplease::unparse(&parsed)));
    Ok(GeneratedFile {
        path: file.path,
        contents,
    })
}

/// prettyplease prints items back to back; this puts a blank line after
/// the module's doc comment, after the `use` and `mod` lines, and between
/// items (at the top level and inside `impl` and `trait` blocks), for
/// readers.
fn space_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous: Option<(usize, &str)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((previous_indent, previous_line)) = previous {
            let starts_item = ["///", "#[", "pub ", "impl", "fn "]
                .iter()
                .any(|start| trimmed.starts_with(start));
            let after_module_doc = previous_line.starts_with("//!") && !trimmed.starts_with("//!");
            let after_item =
                starts_item && indent == previous_indent && indent <= 4 && previous_line == "}";
            let after_declarations = indent <= 4
                && indent == previous_indent
                && previous_line.ends_with(';')
                && ["///", "impl", "pub trait", "pub struct", "pub fn"]
                    .iter()
                    .any(|start| trimmed.starts_with(start));
            if after_module_doc || after_item || after_declarations {
                out.push('\n');
            }
        }
        out.push_str(line);
        out.push('\n');
        previous = Some((indent, trimmed));
    }
    out
}

/// A module path segment without the `r#` prefix (for file names).
fn file_stem(module: &str) -> &str {
    module.strip_prefix("r#").unwrap_or(module)
}

fn root_file(
    by_group: &ByGroup<'_>,
    modules: &BTreeMap<String, String>,
    options: &GenerateOptions,
) -> GeneratedFile {
    let krate = options.crate_path();
    let mut out = String::from(
        "//! Typed informers and listers, by group and version.\n//!\n//! Reach them through the factory: `factory.<group>().<version>().<plural>()`\n//! gives a resource's informer and lister; `for_resource` finds one by\n//! group, version and plural.\n",
    );
    // Each group's gate: its cargo feature, then the k8s-openapi version
    // its types need.
    let gates: BTreeMap<&str, String> = by_group
        .iter()
        .map(|(group, versions)| {
            let feature = options.group_feature(&modules[*group]);
            let version = options.gate(versions.values().flatten().copied(), None);
            (*group, feature + &version)
        })
        .collect();
    for group in by_group.keys() {
        let _ = writeln!(out, "{}pub mod {};", gates[group], modules[*group]);
    }
    match &options.target {
        Target::Informers => {
            let _ = writeln!(out, "impl {krate}::SharedInformerFactory {{");
            for group in by_group.keys() {
                let module = &modules[*group];
                let _ = writeln!(
                    out,
                    "/// The informers of the {label} group.\n{gate}pub fn {module}(&self) -> {module}::Group<'_> {{ {module}::Group::new(self) }}",
                    label = group_label(group),
                    gate = gates[group],
                );
            }
            out.push_str("}\n");
        }
        Target::External { trait_name, .. } => {
            let _ = writeln!(
                out,
                "/// The group accessors of these resources, on the factory.\npub trait {trait_name} {{"
            );
            for group in by_group.keys() {
                let module = &modules[*group];
                let _ = writeln!(
                    out,
                    "/// The informers of the {label} group.\nfn {module}(&self) -> {module}::Group<'_>;",
                    label = group_label(group),
                );
            }
            let _ = writeln!(
                out,
                "}}\nimpl {trait_name} for {krate}::SharedInformerFactory {{"
            );
            for group in by_group.keys() {
                let module = &modules[*group];
                let _ = writeln!(
                    out,
                    "fn {module}(&self) -> {module}::Group<'_> {{ {module}::Group::new(self) }}"
                );
            }
            out.push_str("}\n");
        }
    }
    let every_resource = || {
        by_group
            .values()
            .flat_map(|versions| versions.values().flatten())
    };
    let _ = writeln!(
        out,
        "/// The informer of a generated resource, found by group, version and\n/// plural, as a generic informer (created on first use, like the typed\n/// accessors); `None` for any other resource.\n///\n/// Inlined: it names every generated type, and so compiles every one of\n/// their informers, only in a crate that calls it.\n#[inline]\npub fn for_resource(factory: &{krate}::SharedInformerFactory, resource: &{krate}::apimachinery::GroupVersionResource) -> Option<{krate}::GenericInformer> {{\nmatch (resource.group.as_str(), resource.version.as_str(), resource.resource.as_str()) {{"
    );
    for resource in every_resource() {
        let _ = writeln!(
            out,
            "{feature}{gate}({group:?}, {version:?}, {plural:?}) => Some({krate}::GenericInformer::from_informer({informer})),",
            feature = options.group_feature(&modules[resource.group.as_str()]),
            gate = options.gate([*resource], None),
            group = resource.group,
            version = resource.version,
            plural = resource.plural,
            informer = informer_expression(resource, krate, "factory"),
        );
    }
    out.push_str("_ => None,\n}\n}\n");
    let _ = writeln!(
        out,
        "/// Makes the factory's `for_resource` know every generated resource\n/// without creating any informer (inlined, as `for_resource` is).\n#[inline]\npub fn register_all(factory: &{krate}::SharedInformerFactory) {{"
    );
    // Resources with no Rust type are found by `for_resource` above only.
    if every_resource().all(|resource| resource.is_dynamic()) {
        out.push_str("let _ = factory;\n");
    }
    for resource in every_resource().filter(|resource| !resource.is_dynamic()) {
        let _ = writeln!(
            out,
            "{feature}{gate}factory.register::<{ty}>();",
            feature = options.group_feature(&modules[resource.group.as_str()]),
            gate = options.gate([*resource], None),
            ty = resource.type_path,
        );
    }
    out.push_str("}\n");
    GeneratedFile {
        path: PathBuf::from("mod.rs"),
        contents: out,
    }
}

fn group_file(
    group: &str,
    module: &str,
    versions: &BTreeMap<&str, Vec<&Resource>>,
    options: &GenerateOptions,
) -> GeneratedFile {
    let krate = options.crate_path();
    let label = group_label(group);
    let mut out = format!("//! The {label} group.\n");
    let group_minor = first_minor(versions.values().flatten().copied());
    for (version, resources) in versions {
        let _ = writeln!(
            out,
            "{}pub mod {};",
            options.gate(resources.iter().copied(), group_minor),
            identifier(version)
        );
    }
    let _ = writeln!(
        out,
        "/// The versions of the {label} group.\n#[derive(Debug, Clone, Copy)]\npub struct Group<'a> {{ factory: &'a {krate}::SharedInformerFactory }}\nimpl<'a> Group<'a> {{\npub(crate) fn new(factory: &'a {krate}::SharedInformerFactory) -> Self {{ Group {{ factory }} }}"
    );
    for (version, resources) in versions {
        let version_module = identifier(version);
        let _ = writeln!(
            out,
            "/// The {label} {version} resources.\n{gate}pub fn {version_module}(&self) -> {version_module}::Version<'a> {{ {version_module}::Version::new(self.factory) }}",
            gate = options.gate(resources.iter().copied(), group_minor),
        );
    }
    out.push_str("}\n");
    GeneratedFile {
        path: PathBuf::from(file_stem(module)).join("mod.rs"),
        contents: out,
    }
}

fn version_file(
    group: &str,
    module: &str,
    version: &str,
    resources: &[&Resource],
    options: &GenerateOptions,
) -> GeneratedFile {
    let krate = options.crate_path();
    let label = group_label(group);
    let version_minor = first_minor(resources.iter().copied());
    let mut out = format!(
        "//! The {label} {version} resources.\nuse std::sync::Arc;\nuse {krate}::apimachinery::LabelSelector;\n"
    );
    let _ = writeln!(
        out,
        "/// The informers of {label} {version}.\n#[derive(Debug, Clone, Copy)]\npub struct Version<'a> {{ factory: &'a {krate}::SharedInformerFactory }}\nimpl<'a> Version<'a> {{\npub(crate) fn new(factory: &'a {krate}::SharedInformerFactory) -> Self {{ Version {{ factory }} }}"
    );
    for resource in resources {
        let _ = writeln!(
            out,
            "/// The {plural} informer and lister.\n{gate}pub fn {method}(&self) -> {kind}Informer<'a> {{ {kind}Informer {{ factory: self.factory }} }}",
            gate = options.gate([*resource], version_minor),
            plural = resource.plural,
            method = accessor(&resource.plural),
            kind = resource.kind
        );
    }
    out.push_str("}\n");
    for resource in resources {
        resource_items(
            &mut out,
            resource,
            krate,
            &options.gate([*resource], version_minor),
        );
    }
    GeneratedFile {
        path: PathBuf::from(file_stem(module))
            .join(format!("{}.rs", file_stem(&identifier(version)))),
        contents: out,
    }
}

/// The Rust type of `resource`'s cached objects.
fn object_type(resource: &Resource, krate: &str) -> String {
    if resource.is_dynamic() {
        format!("{krate}::apimachinery::DynamicObject")
    } else {
        resource.type_path.clone()
    }
}

/// The expression giving `factory`'s informer of `resource`: by type, or
/// for a resource with no Rust type, by its group, version, kind and plural
/// as `DynamicObject`s.
fn informer_expression(resource: &Resource, krate: &str, factory: &str) -> String {
    if resource.is_dynamic() {
        let scope = if resource.namespaced {
            "namespaced"
        } else {
            "cluster_scoped"
        };
        format!(
            "{factory}.dynamic_informer_for(&{krate}::apimachinery::ApiResource::{scope}({krate}::apimachinery::GroupVersionKind::new({group:?}, {version:?}, {kind:?}), {plural:?}))",
            group = resource.group,
            version = resource.version,
            kind = resource.kind,
            plural = resource.plural,
        )
    } else {
        format!("{factory}.informer_for::<{}>()", resource.type_path)
    }
}

fn resource_items(out: &mut String, resource: &Resource, krate: &str, gate: &str) {
    let kind = &resource.kind;
    let ty = &object_type(resource, krate);
    let informer = informer_expression(resource, krate, "self.factory");
    let plural = &resource.plural;
    let _ = writeln!(
        out,
        "/// The factory's shared informer of {plural}, and listers over its cache.\n{gate}#[derive(Debug, Clone, Copy)]\npub struct {kind}Informer<'a> {{ factory: &'a {krate}::SharedInformerFactory }}\n{gate}impl {kind}Informer<'_> {{\n/// The shared informer, created on first use and started by the\n/// factory's `start`; every caller gets the same one.\n#[inline]\npub fn informer(&self) -> {krate}::SharedIndexInformer<{ty}> {{ {informer} }}\n/// A lister over the informer's cache.\n#[inline]\npub fn lister(&self) -> {kind}Lister {{ {kind}Lister(self.informer().lister()) }}\n}}"
    );
    let _ = writeln!(
        out,
        "/// Reads cached {plural}; the objects are shared with the cache and\n/// must not be changed.\n{gate}#[derive(Debug, Clone)]\npub struct {kind}Lister({krate}::Lister<{ty}>);\n{gate}impl {kind}Lister {{\n/// The cached {plural} whose labels match `selector`.\n#[inline]\npub fn list(&self, selector: &LabelSelector) -> Vec<Arc<{ty}>> {{ self.0.list(selector) }}"
    );
    if resource.namespaced {
        let _ = writeln!(
            out,
            "/// A lister of the {plural} in `namespace`.\n#[inline]\npub fn {method}(&self, namespace: &str) -> {kind}NamespaceLister {{ {kind}NamespaceLister(self.0.namespace(namespace)) }}\n}}\n/// Reads the cached {plural} of one namespace.\n{gate}#[derive(Debug, Clone)]\npub struct {kind}NamespaceLister({krate}::NamespaceLister<{ty}>);\n{gate}impl {kind}NamespaceLister {{\n/// The namespace's cached {plural} whose labels match `selector`.\n#[inline]\npub fn list(&self, selector: &LabelSelector) -> Vec<Arc<{ty}>> {{ self.0.list(selector) }}\n/// The cached object named `name` in the namespace, `None` when none is.\n#[inline]\npub fn get(&self, name: &str) -> Option<Arc<{ty}>> {{ self.0.get(name) }}\n/// As `get`, with a cached entry that no longer decodes an error\n/// rather than `None`.\n#[inline]\npub fn try_get(&self, name: &str) -> Result<Option<Arc<{ty}>>, {krate}::Error> {{ self.0.try_get(name) }}\n}}",
            method = accessor(plural)
        );
    } else {
        let _ = writeln!(
            out,
            "/// The cached object named `name`, `None` when none is.\n#[inline]\npub fn get(&self, name: &str) -> Option<Arc<{ty}>> {{ self.0.get_by_key(name) }}\n/// As `get`, with a cached entry that no longer decodes an error\n/// rather than `None`.\n#[inline]\npub fn try_get(&self, name: &str) -> Result<Option<Arc<{ty}>>, {krate}::Error> {{ self.0.try_get_by_key(name) }}\n}}"
        );
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn resource(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
    ) -> Resource {
        Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced,
            verbs: ["list", "watch"].iter().map(|v| v.to_string()).collect(),
            subresources: BTreeSet::new(),
            type_path: format!("k8s_openapi::api::x::{version}::{kind}"),
        }
    }

    fn options() -> GenerateOptions {
        GenerateOptions {
            target: Target::Informers,
            command: "clientgo-codegen test".into(),
            include_beta: false,
            include_alpha: false,
        }
    }

    #[test]
    fn files_per_group_and_version_ga_only_and_deterministic() {
        let resources = vec![
            resource("apps", "v1", "Deployment", "deployments", true),
            resource("", "v1", "Pod", "pods", true),
            resource("", "v1", "Node", "nodes", false),
            resource("apps", "v1beta1", "Widget", "widgets", true),
        ];
        let files = generate(&resources, &options()).unwrap();
        let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(
            paths,
            [
                "apps/mod.rs",
                "apps/v1.rs",
                "core/mod.rs",
                "core/v1.rs",
                "mod.rs"
            ]
        );
        assert_eq!(files, generate(&resources, &options()).unwrap());
        let core = &files[3].contents;
        assert!(core.starts_with("// Generated by clientgo-codegen"));
        assert!(core.contains("pub fn pods(&self) -> PodInformer<'a>"));
        assert!(core.contains("pub struct PodNamespaceLister"));
        assert!(
            !core.contains("NodeNamespaceLister"),
            "cluster-scoped: no namespace lister"
        );
        let root = &files[4].contents;
        assert!(root.contains("impl crate::SharedInformerFactory"));
        assert!(root.contains(r#"("apps", "v1", "deployments") => {"#));
        assert!(root.contains("factory.register::<k8s_openapi::api::x::v1::Pod>();"));
        // Every function that names a type is inlined, so the library
        // never instantiates an informer (the build-time guarantee).
        for file in &files {
            let lines: Vec<&str> = file.contents.lines().collect();
            for (index, line) in lines.iter().enumerate() {
                let names_a_type = [
                    "pub fn informer(",
                    "pub fn lister(",
                    "pub fn list(",
                    "pub fn get(",
                    "pub fn for_resource(",
                    "pub fn register_all(",
                ]
                .iter()
                .any(|start| line.trim_start().starts_with(start));
                if names_a_type {
                    assert_eq!(
                        lines[index - 1].trim(),
                        "#[inline]",
                        "{}: {line}",
                        file.path.display()
                    );
                }
            }
        }
        // Each group is behind its cargo feature in clientgo-informers.
        assert!(root.contains("#[cfg(feature = \"apps\")]\npub mod apps;"));
        assert!(!root.contains("widgets"));

        let with_beta = generate(
            &resources,
            &GenerateOptions {
                include_beta: true,
                ..options()
            },
        )
        .unwrap();
        assert!(
            with_beta
                .iter()
                .any(|f| f.path.ends_with("apps/v1beta1.rs"))
        );
    }

    #[test]
    fn external_targets_get_an_extension_trait() {
        let resources = vec![resource(
            "stable.example.com",
            "v1",
            "CronTab",
            "crontabs",
            true,
        )];
        let options = GenerateOptions {
            target: Target::External {
                trait_name: "CronTabInformers".into(),
                informers_path: DEFAULT_INFORMERS_PATH.into(),
            },
            ..options()
        };
        let files = generate(&resources, &options).unwrap();
        let root = &files
            .iter()
            .find(|f| f.path == std::path::Path::new("mod.rs"))
            .unwrap()
            .contents;
        assert!(root.contains("pub trait CronTabInformers"));
        assert!(
            root.contains("impl CronTabInformers for clientgo_informers::SharedInformerFactory")
        );
        assert!(root.contains("fn stable(&self) -> stable::Group<'_>"));
    }

    #[test]
    fn types_of_later_kubernetes_versions_are_gated_in_informers_only() {
        let mut claim = resource(
            "resource.k8s.io",
            "v1",
            "ResourceClaim",
            "resourceclaims",
            true,
        );
        claim.type_path = "k8s_openapi::api::resource::v1::ResourceClaim".into();
        let resources = vec![claim, resource("", "v1", "Pod", "pods", true)];
        let files = generate(&resources, &options()).unwrap();
        let root = &files
            .iter()
            .find(|f| f.path.as_os_str() == "mod.rs")
            .unwrap()
            .contents;
        assert!(
            root.contains("#[cfg(k8s_openapi_ge_1_34)]\npub mod resource;"),
            "{root}"
        );
        assert!(root.contains("pub mod core;\n"));
        let external = GenerateOptions {
            target: Target::External {
                trait_name: "Extra".into(),
                informers_path: "clientgo::informers".into(),
            },
            ..options()
        };
        let files = generate(&resources, &external).unwrap();
        assert!(files.iter().all(|f| !f.contents.contains("#[cfg(")));
        assert!(
            files
                .iter()
                .all(|f| !f.contents.contains("clientgo_informers")),
            "every path goes through the one named"
        );
        assert!(files.iter().any(|f| {
            f.contents
                .contains("clientgo::informers::SharedInformerFactory")
        }));
    }

    #[test]
    fn clashes_and_names_that_are_not_rust_are_errors() {
        let twice = vec![
            resource("apps", "v1", "Deployment", "deployments", true),
            resource("apps", "v1", "Deployment2", "deployments", true),
        ];
        let error = generate(&twice, &options()).unwrap_err();
        assert!(matches!(error, Error::Clash { .. }), "{error}");
        assert!(error.to_string().contains("apps/v1/deployments"), "{error}");

        let bad = vec![resource("apps", "v1", "Deploy ment", "deployments", true)];
        let error = generate(&bad, &options()).unwrap_err();
        assert!(
            matches!(&error, Error::Generated { path, .. } if path.ends_with("apps/v1.rs")),
            "{error}"
        );
    }
}
