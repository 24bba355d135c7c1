//! `clientgo-codegen`: generates typed informers, listers and factory
//! accessors from a Kubernetes OpenAPI spec (a file or a cluster's) and
//! CustomResourceDefinition manifests. Run with `--help` for the flags.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;

use std::process::ExitCode;

use clientgo_codegen::{
    ClusterOptions, DEFAULT_INFORMERS_PATH, Error, GenerateOptions, Resource, Target, TypeMapping,
    compare_output, fetch_openapi, generate, resources_from_crds, resources_from_openapi_typed,
    write_output,
};

fn main() -> ExitCode {
    let args = match args::parse(&std::env::args_os().skip(1).collect::<Vec<_>>()) {
        Ok(args) => args,
        Err(error) => {
            // Help and version go to stdout with status 0; mistakes to
            // stderr with 2.
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    clientgo_codegen::install_log_subscriber();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("clientgo-codegen: {error}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &args::Args) -> Result<ExitCode, Error> {
    let mut resources: Vec<Resource> = Vec::new();
    let types: TypeMapping = args.types.iter().cloned().collect();
    let mut untyped = Vec::new();
    for file in &args.openapi {
        let bytes = std::fs::read(file).map_err(|source| Error::Read {
            file: file.clone(),
            source,
        })?;
        let found = resources_from_openapi_typed(&file.display().to_string(), &bytes, &types)?;
        resources.extend(found.resources);
        untyped.extend(found.untyped);
    }
    if args.from_cluster {
        let bytes = fetch_openapi(&ClusterOptions {
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.clone(),
        })?;
        let found = resources_from_openapi_typed("the cluster's /openapi/v2", &bytes, &types)?;
        resources.extend(found.resources);
        untyped.extend(found.untyped);
    }
    for resource in &untyped {
        eprintln!(
            "clientgo-codegen: {resource} has no Rust type: its informer caches DynamicObjects; \
             name a type with --type KIND=PATH"
        );
    }
    for file in &args.crds {
        let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
            file: file.clone(),
            source,
        })?;
        resources.extend(resources_from_crds(
            &file.display().to_string(),
            &text,
            &types,
        )?);
    }
    let target = if args.target == Some(args::TargetArg::Informers) {
        Target::Informers
    } else {
        Target::External {
            trait_name: args
                .trait_name
                .clone()
                .unwrap_or_else(|| "GeneratedInformers".to_string()),
            informers_path: args
                .informers_path
                .clone()
                .unwrap_or_else(|| DEFAULT_INFORMERS_PATH.to_string()),
        }
    };
    let options = GenerateOptions {
        target,
        command: args.command.clone(),
        include_beta: args.include_beta,
        include_alpha: args.include_alpha,
    };
    let files = generate(&resources, &options)?;
    let out = args.out.as_path();
    if args.check {
        let differing = compare_output(out, &files)?;
        if differing.is_empty() {
            println!("{}: up to date ({} files)", out.display(), files.len());
            return Ok(ExitCode::SUCCESS);
        }
        for path in &differing {
            println!("{}: differs", out.join(path).display());
        }
        return Ok(ExitCode::from(1));
    }
    write_output(out, &files)?;
    println!("{}: {} files written", out.display(), files.len());
    Ok(ExitCode::SUCCESS)
}
