//! Files in and out: the glTF importer's rules, export, hostile input (files made here, the
//! generated corpus run through every command, the mutation fuzzer). One test binary; one
//! module per subject.

#[path = "../common/mod.rs"]
mod common;

mod compressed;
mod export;
mod fbx;
mod fbx_conventions;
mod fbx_curves;
mod fbx_textures;
mod hostile;
mod hostile_corpus;
mod import;
mod memory;
mod mutation_fuzz;
