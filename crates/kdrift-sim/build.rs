//! Compiles the vendored upstream `.proto` files (`proto/`, see `proto/README.md`) into one
//! descriptor set, which `server::protobuf` decodes request bodies by. `protox` is pure Rust:
//! no `protoc` is needed.
use std::path::{Path, PathBuf};

fn protos(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            protos(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    protos(&root, &mut files)?;
    files.sort();
    let mut compiler = protox::Compiler::new([&root])?;
    compiler.include_source_info(false).include_imports(true);
    for file in &files {
        compiler.open_file(file.strip_prefix(&root)?)?;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("kubernetes.fds");
    std::fs::write(out, compiler.encode_file_descriptor_set())?;
    Ok(())
}
