//! `skinview`: inspect, render, compare, dump, export and benchmark skinned glTF models and
//! native rigs. The commands live in `src/cli/`, one file each.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line program prints

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
