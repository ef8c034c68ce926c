//! A choice among named values — a skinning blend, a bone style, who skins — said the same way
//! on the command line, in reports and in the viewer. Each library enum implements [`Choice`]
//! once (its values, their names, one line of help each, accepted aliases); the command line
//! builds its value parsers and help lists from it, so no front end keeps a copy of a
//! library enum. Plain data: no parser crate here.

/// An enum whose values a user names.
pub trait Choice: Copy + PartialEq + Send + Sync + 'static {
    /// Every value a user may name, in the order help and menus list them.
    const ALL: &'static [Self];

    /// The value's name as typed (lowercase, words joined by `-`).
    fn name(self) -> &'static str;

    /// One line saying what the value is (the command line's help).
    fn help(self) -> &'static str;

    /// Other spellings accepted for the value (old names kept working).
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }

    /// The value named `text` (its name or an alias, exactly), if any.
    fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.name() == text || c.aliases().contains(&text))
    }

    /// Every name, for messages: `lbs, dqs or stitch`.
    fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|c| c.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            Some((last, _)) => (*last).to_string(),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fruit {
        Apple,
        Blood,
        Cherry,
    }

    impl Choice for Fruit {
        const ALL: &'static [Fruit] = &[Fruit::Apple, Fruit::Blood, Fruit::Cherry];
        fn name(self) -> &'static str {
            match self {
                Fruit::Apple => "apple",
                Fruit::Blood => "blood-orange",
                Fruit::Cherry => "cherry",
            }
        }
        fn help(self) -> &'static str {
            "a fruit"
        }
        fn aliases(self) -> &'static [&'static str] {
            match self {
                Fruit::Blood => &["orange"],
                _ => &[],
            }
        }
    }

    #[test]
    fn names_and_aliases_parse_and_nothing_else_does() {
        for f in Fruit::ALL {
            assert_eq!(Fruit::parse(f.name()), Some(*f));
        }
        assert_eq!(Fruit::parse("orange"), Some(Fruit::Blood));
        assert_eq!(Fruit::parse("Apple"), None);
        assert_eq!(Fruit::parse(""), None);
        assert_eq!(Fruit::names(), "apple, blood-orange or cherry");
    }
}
