//! Grammars compiled into the host, and which of their nodes are definitions
//! (listed in outlines and scopes) or comments.

use tree_sitter::Language;
use tree_sitter_language::LanguageFn;

/// What the outline needs to know about one grammar.
pub struct LanguageSpec {
    /// Neovim `filetype`s parsed with this grammar.
    pub filetypes: &'static [&'static str],
    grammar: LanguageFn,
    /// Named definitions (functions, types, impls, …).
    pub definitions: &'static [&'static str],
    /// Anonymous functions, listed only when bound to a name
    /// (`const f = () => {}`, `M.f = function() end`).
    pub anonymous: &'static [&'static str],
    /// Parents that bind an anonymous function to a name.
    pub binders: &'static [&'static str],
    /// Definitions listed only when they have a body (C's `struct s { … }`,
    /// not every `struct s *p`).
    pub need_body: &'static [&'static str],
    pub comments: &'static [&'static str],
    /// Keywords that start a definition; inside a syntax error (an `ERROR`
    /// node) they still mark one, so a broken file keeps most of its outline.
    pub error_keywords: &'static [&'static str],
}

impl LanguageSpec {
    pub fn language(&self) -> Language {
        Language::new(self.grammar)
    }
}

const JS_DEFINITIONS: &[&str] = &[
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "method_definition",
];
const JS_ANONYMOUS: &[&str] = &["arrow_function", "function_expression"];
const JS_BINDERS: &[&str] = &[
    "variable_declarator",
    "assignment_expression",
    "pair",
    "field_definition",
];
const TS_BINDERS: &[&str] = &[
    "variable_declarator",
    "assignment_expression",
    "pair",
    "public_field_definition",
];
const TS_DEFINITIONS: &[&str] = &[
    "function_declaration",
    "generator_function_declaration",
    "function_signature",
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "abstract_method_signature",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "internal_module",
    "module",
];

/// TypeScript and TSX: one language in two grammars.
const fn typescript(filetypes: &'static [&'static str], grammar: LanguageFn) -> LanguageSpec {
    LanguageSpec {
        filetypes,
        grammar,
        definitions: TS_DEFINITIONS,
        anonymous: JS_ANONYMOUS,
        binders: TS_BINDERS,
        need_body: &[],
        comments: &["comment"],
        error_keywords: &["function", "class", "interface"],
    }
}

pub static LANGUAGES: &[LanguageSpec] = &[
    LanguageSpec {
        filetypes: &["rust"],
        grammar: tree_sitter_rust::LANGUAGE,
        definitions: &[
            "function_item",
            "function_signature_item",
            "struct_item",
            "enum_item",
            "union_item",
            "trait_item",
            "impl_item",
            "mod_item",
            "type_item",
            "macro_definition",
        ],
        anonymous: &[],
        binders: &[],
        need_body: &["mod_item"],
        comments: &["line_comment", "block_comment"],
        error_keywords: &["fn", "impl", "struct", "enum", "trait", "mod"],
    },
    LanguageSpec {
        filetypes: &["python"],
        grammar: tree_sitter_python::LANGUAGE,
        definitions: &["function_definition", "class_definition"],
        anonymous: &[],
        binders: &[],
        need_body: &[],
        comments: &["comment"],
        error_keywords: &["def", "class"],
    },
    LanguageSpec {
        filetypes: &["javascript", "javascriptreact"],
        grammar: tree_sitter_javascript::LANGUAGE,
        definitions: JS_DEFINITIONS,
        anonymous: JS_ANONYMOUS,
        binders: JS_BINDERS,
        need_body: &[],
        comments: &["comment"],
        error_keywords: &["function", "class"],
    },
    typescript(&["typescript"], tree_sitter_typescript::LANGUAGE_TYPESCRIPT),
    typescript(
        &["typescriptreact", "tsx"],
        tree_sitter_typescript::LANGUAGE_TSX,
    ),
    LanguageSpec {
        filetypes: &["go"],
        grammar: tree_sitter_go::LANGUAGE,
        definitions: &[
            "function_declaration",
            "method_declaration",
            "type_spec",
            "type_alias",
        ],
        anonymous: &[],
        binders: &[],
        need_body: &[],
        comments: &["comment"],
        error_keywords: &["func", "type"],
    },
    LanguageSpec {
        filetypes: &["lua"],
        grammar: tree_sitter_lua::LANGUAGE,
        definitions: &["function_declaration"],
        anonymous: &["function_definition"],
        binders: &["expression_list", "field"],
        need_body: &[],
        comments: &["comment"],
        error_keywords: &["function"],
    },
    LanguageSpec {
        filetypes: &["c", "h"],
        grammar: tree_sitter_c::LANGUAGE,
        definitions: &[
            "function_definition",
            "struct_specifier",
            "enum_specifier",
            "union_specifier",
            "type_definition",
        ],
        anonymous: &[],
        binders: &[],
        need_body: &["struct_specifier", "enum_specifier", "union_specifier"],
        comments: &["comment"],
        error_keywords: &["struct", "enum", "union", "typedef"],
    },
];

/// The grammar for a Neovim filetype, if the host has one.
pub fn for_filetype(filetype: &str) -> Option<&'static LanguageSpec> {
    LANGUAGES
        .iter()
        .find(|spec| spec.filetypes.contains(&filetype))
}

/// Every filetype the host parses (told to Lua, which falls back to
/// Neovim's own parsers for the rest).
pub fn filetypes() -> Vec<&'static str> {
    LANGUAGES
        .iter()
        .flat_map(|spec| spec.filetypes.iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_and_knows_its_node_kinds() {
        for spec in LANGUAGES {
            let language = spec.language();
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&language)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.filetypes[0]));
            for kind in spec
                .definitions
                .iter()
                .chain(spec.anonymous)
                .chain(spec.binders)
                .chain(spec.comments)
            {
                assert_ne!(
                    language.id_for_node_kind(kind, true),
                    0,
                    "{}: unknown node kind {kind}",
                    spec.filetypes[0]
                );
            }
        }
        assert_eq!(
            for_filetype("typescriptreact").unwrap().filetypes,
            ["typescriptreact", "tsx"]
        );
        assert!(for_filetype("cobol").is_none());
    }
}
