//! `clientgo-protobuf-gen`: generates clientgo-protobuf's `Message`
//! implementations from Kubernetes' `generated.proto` files and
//! k8s-openapi's source. Run with `--help` for the flags.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clientgo_codegen::{
    ProtobufGenOptions, compare_output, generate_protobuf, k8s_openapi_source_dir,
    learn_value_fields, write_output,
};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "Generates clientgo-protobuf's decoders and encoders for k8s-openapi's types."
)]
struct Args {
    /// The directory of Kubernetes' generated.proto files.
    #[arg(long, default_value = "../shared/proto/k8s.io")]
    proto_dir: PathBuf,
    /// k8s-openapi's source directory (default: the one Cargo resolves for
    /// this workspace).
    #[arg(long)]
    k8s_openapi_src: Option<PathBuf>,
    /// The list of Go value fields with omitempty.
    #[arg(long, default_value = "codegen/data/protobuf-value-fields.txt")]
    value_fields: PathBuf,
    /// The directory to generate (replaced as a whole).
    #[arg(long, default_value = "protobuf/src/generated")]
    out: PathBuf,
    /// Only tell whether the output is current (exit 1 when it is not).
    #[arg(long)]
    check: bool,
    /// Learn the value-field list from Go sources instead, writing it to
    /// --value-fields: MODULE=DIR pairs such as k8s.io/api=/src/api
    /// (repeatable).
    #[arg(long, value_name = "MODULE=DIR")]
    go_source: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    clientgo_codegen::install_log_subscriber();
    match run(&args) {
        Ok(code) => code,
        Err(problem) => {
            eprintln!("clientgo-protobuf-gen: {problem}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    if !args.go_source.is_empty() {
        let mut roots = Vec::new();
        for pair in &args.go_source {
            let (module, dir) = pair
                .split_once('=')
                .ok_or_else(|| format!("--go-source {pair}: not MODULE=DIR"))?;
            roots.push((module.to_string(), PathBuf::from(dir)));
        }
        let text = learn_value_fields(&args.proto_dir, &roots)?;
        std::fs::write(&args.value_fields, &text)?;
        println!(
            "{}: {} fields",
            args.value_fields.display(),
            text.lines().filter(|l| !l.starts_with('#')).count()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let k8s_openapi_src = match &args.k8s_openapi_src {
        Some(dir) => dir.clone(),
        None => k8s_openapi_source_dir(&std::env::current_dir()?)
            .ok_or("cargo metadata did not locate k8s-openapi; pass --k8s-openapi-src")?,
    };
    let options = ProtobufGenOptions {
        proto_dir: args.proto_dir.clone(),
        k8s_openapi_src,
        value_fields: args.value_fields.clone(),
        command: "cargo run -p clientgo-codegen --bin clientgo-protobuf-gen".to_string(),
    };
    let (files, summary) = generate_protobuf(&options)?;
    if args.check {
        let differing = compare_output(&args.out, &files)?;
        if differing.is_empty() {
            println!("{}: up to date ({} files)", args.out.display(), files.len());
            return Ok(ExitCode::SUCCESS);
        }
        for path in &differing {
            println!("{}: differs", args.out.join(path).display());
        }
        return Ok(ExitCode::from(1));
    }
    write_output(&args.out, &files)?;
    println!(
        "{}: {} files, {} types ({} resources); {} proto fields no k8s-openapi version has",
        args.out.display(),
        files.len(),
        summary.messages,
        summary.resources,
        summary.absent_fields.len()
    );
    for field in &summary.absent_fields {
        println!("  absent: {field}");
    }
    Ok(ExitCode::SUCCESS)
}
