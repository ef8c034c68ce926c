//! Value parsers for library choices ([`skinview::choice::Choice`]): `--blend dqs` parses
//! with the names the library gives its values, and `--help` lists them with their help, so
//! the command line keeps no copy of a library enum (tests/architecture.rs allows a `ValueEnum`
//! here only for choices the library does not have).

use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use skinview::choice::Choice;

/// Parses a `T` by its [`Choice`] names and aliases.
#[derive(Clone, Copy)]
pub struct ChoiceParser<T>(PhantomData<T>);

/// The value parser of `T`: `#[arg(long, value_parser = choice::<SkinMode>())]`.
pub fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

/// `T`'s values as clap lists them: name, help, aliases.
fn possible_values<T: Choice>() -> impl Iterator<Item = PossibleValue> {
    T::ALL.iter().map(|c| {
        PossibleValue::new(c.name())
            .help(c.help())
            .aliases(c.aliases().iter().copied())
    })
}

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        // clap's own parser checks the name (and words an unknown one as clap does); the
        // choice then maps the name it accepted.
        let name = PossibleValuesParser::new(possible_values::<T>()).parse_ref(cmd, arg, value)?;
        T::parse(&name).ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(possible_values::<T>()))
    }
}
