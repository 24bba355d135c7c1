//! Finding the generator's input files.

use std::path::{Path, PathBuf};

use super::error::ProtobufGenError;

/// Every file under `dir` (recursively) whose extension is `extension`,
/// sorted by path.
pub(crate) fn with_extension(
    dir: &Path,
    extension: &str,
) -> Result<Vec<PathBuf>, ProtobufGenError> {
    let mut found = Vec::new();
    collect(dir, extension, &mut found)?;
    found.sort();
    Ok(found)
}

fn collect(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) -> Result<(), ProtobufGenError> {
    let read_error = |source| ProtobufGenError::Read {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let path = entry.map_err(read_error)?.path();
        if path.is_dir() {
            collect(&path, extension, out)?;
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
    Ok(())
}
