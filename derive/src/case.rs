//! serde's `rename_all` rules, applied as serde applies them: to field
//! names (written in snake_case) and to variant names (in PascalCase).

/// One of serde's `rename_all` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rule serde spells `name`, if any.
    pub(crate) fn parse(name: &str) -> Option<RenameRule> {
        Some(match name {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A field's name (snake_case in Rust) under this rule.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capital = true;
                for c in field.chars() {
                    if c == '_' {
                        capital = true;
                    } else if capital {
                        out.push(c.to_ascii_uppercase());
                        capital = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                lower_first(&pascal)
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.replace('_', "-").to_ascii_uppercase(),
        }
    }

    /// A variant's name (PascalCase in Rust) under this rule.
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut out = String::new();
                for (index, c) in variant.char_indices() {
                    if c.is_uppercase() && index > 0 {
                        out.push('_');
                    }
                    out.push(c.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_serde_renames() {
        let fields = [
            ("camelCase", "cron_spec_x", "cronSpecX"),
            ("PascalCase", "cron_spec", "CronSpec"),
            ("kebab-case", "cron_spec", "cron-spec"),
            ("SCREAMING_SNAKE_CASE", "cron_spec", "CRON_SPEC"),
            ("lowercase", "cron_spec", "cron_spec"),
        ];
        for (rule, input, expected) in fields {
            let rule = RenameRule::parse(rule);
            assert_eq!(
                rule.map(|r| r.apply_to_field(input)).as_deref(),
                Some(expected)
            );
        }
        let variants = [
            ("snake_case", "OnFailure", "on_failure"),
            ("camelCase", "OnFailure", "onFailure"),
            ("lowercase", "OnFailure", "onfailure"),
            ("kebab-case", "OnFailure", "on-failure"),
            ("SCREAMING-KEBAB-CASE", "OnFailure", "ON-FAILURE"),
        ];
        for (rule, input, expected) in variants {
            let rule = RenameRule::parse(rule);
            assert_eq!(
                rule.map(|r| r.apply_to_variant(input)).as_deref(),
                Some(expected)
            );
        }
    }
}
