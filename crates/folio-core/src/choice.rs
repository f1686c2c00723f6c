//! Settings that take one of a few named values (a search mode, a model
//! backend). The names live with the type, once; the CLI offers them, the
//! config file and the environment are parsed with them, and an unknown name
//! is refused with the list of known ones.

pub trait Choice: Copy + Sized + 'static {
    /// Every value, in the order they are offered.
    const ALL: &'static [Self];

    /// The value's name, as typed and as serialised.
    fn as_str(self) -> &'static str;

    /// The value named `text`, ignoring case.
    fn parse(text: &str) -> Result<Self, UnknownChoice> {
        Self::ALL
            .iter()
            .copied()
            .find(|c| c.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownChoice {
                given: text.to_string(),
                known: Self::ALL.iter().map(|c| c.as_str()).collect(),
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not one of: {}", known.join(", "))]
pub struct UnknownChoice {
    pub given: String,
    pub known: Vec<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Mode {
        Hybrid,
        Dense,
        Bm25,
    }

    impl Choice for Mode {
        const ALL: &'static [Mode] = &[Mode::Hybrid, Mode::Dense, Mode::Bm25];

        fn as_str(self) -> &'static str {
            match self {
                Mode::Hybrid => "hybrid",
                Mode::Dense => "dense",
                Mode::Bm25 => "bm25",
            }
        }
    }

    #[test]
    fn names_parse_back_ignoring_case_and_unknown_ones_list_the_known() {
        for &mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.as_str()), Ok(mode));
        }
        assert_eq!(Mode::parse(" BM25 "), Ok(Mode::Bm25));
        let err = Mode::parse("sparse").unwrap_err();
        assert_eq!(
            err.to_string(),
            "`sparse` is not one of: hybrid, dense, bm25"
        );
    }
}
