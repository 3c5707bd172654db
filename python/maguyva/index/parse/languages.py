"""What maguyva knows about each language it parses, as data.

One `LanguageSpec` per language: how files are recognised, and tree-sitter queries that say which
nodes are definitions and which are references. `maguyva.index.parse` runs the queries; nothing in here is
logic. The queries follow one naming convention for their captures:

definitions
    ``@definition.<kind>``  the defining node; ``<kind>`` is one of `SYMBOL_KINDS`, or ``scope``
                            for a block that qualifies the names inside it without being a symbol
                            itself (Rust ``impl Type``, Swift ``extension Type``, Haskell
                            ``instance C Type``). A ``function`` directly inside a class-like
                            symbol or a scope is reported as a ``method``.
    ``@name``               the defined name. A name with separators (``Foo::bar``, ``M.run``,
                            ``Account:deposit``) is split: the last part is the name, the rest
                            qualifies it, as a receiver does.
    ``@receiver``           the receiver type of a method written outside its type (Go).
    ``@body``               where the signature ends, when the node has no ``body`` field and
                            no child of a type in `LanguageSpec.body_types`.
calls
    ``@call.name``          the called name's last identifier.
    ``@call.qualifier``     the receiver or qualifier as written.
    ``@call.callee``        the whole callee, when the qualifier is not a node of its own: the
                            qualifier is then the text before the name.
    ``@call.ignore``        a name that looks like a call but is not one (Elixir ``@attr``).
imports
    ``@import``             the import statement (captures of one statement form one reference
                            per module).
    ``@import.module``      the module or path as written; ``@import.module.part`` pieces of it,
                            joined with ".".
    ``@import.name``        a name the statement imports.
inheritance
    ``@inherit.base``       a base class, implemented interface or trait; the inheriting type is
                            the innermost definition around it.
documentation
    ``@doc``                a documentation attribute for the definition below it (Elixir @doc).
    ``@doc.inner``          a docstring inside the definition it documents (Python, @moduledoc).
    ``@signature``          a separate type signature for the function of the same ``@name``
                            that follows it (Haskell).

Comment and attribute node types are listed per language rather than queried: comments right above
a definition are its docstring, and both attach to the code below them when chunking.

Captures whose name starts with "_" only serve predicates (``#eq?``, ``#match?``).
"""

from __future__ import annotations

from dataclasses import dataclass

#: A constant by convention in languages that do not declare constants: UPPER_SNAKE_CASE.
_UPPER = r'"^[A-Z][A-Z0-9_]*$"'


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """How to recognise one language's files and read its syntax trees."""

    #: maguyva's name for the language; also its tree-sitter-language-pack name unless `grammar`.
    name: str
    #: File name endings, lower case, with the dot.
    extensions: tuple[str, ...]
    #: Query for definitions (see the module docs for the capture names).
    definitions: str
    calls: str = ""
    imports: str = ""
    inherits: str = ""
    #: Extra documentation patterns (``@doc``, ``@doc.inner``, ``@signature``).
    docs: str = ""
    #: Node types of comments.
    comments: frozenset[str] = frozenset({"comment"})
    #: Node types that decorate the definition after them (Rust ``#[derive]``, decorators).
    attributes: frozenset[str] = frozenset()
    #: Node types that wrap a definition (decorators, ``export``, ``template<...>``).
    wrappers: frozenset[str] = frozenset()
    #: Node types that hold a definition's body, for nodes without a ``body`` field.
    body_types: frozenset[str] = frozenset()
    #: Separators of a qualified definition name (``Foo::bar``), split into receiver and name.
    name_separators: tuple[str, ...] = ()
    #: Qualifiers dropped from a qualified definition name (``Foo.prototype.bar`` -> Foo.bar).
    ignored_qualifiers: tuple[str, ...] = ()
    #: Whether a definition with a qualified name is a method (C++ ``Foo::bar``).
    qualified_is_method: bool = False
    #: Whether consecutive definitions of one name are clauses of one function (Haskell
    #: equations, Elixir multi-clause functions) and make one symbol.
    merge_clauses: bool = False
    #: Exact file names (``Rakefile``).
    filenames: tuple[str, ...] = ()
    #: Interpreter names of a ``#!`` line.
    interpreters: tuple[str, ...] = ()
    #: tree-sitter-language-pack name, when it differs from `name`.
    grammar: str | None = None

    @property
    def grammar_name(self) -> str:
        """The tree-sitter-language-pack name of the grammar."""
        return self.grammar or self.name


BASH = LanguageSpec(
    name="bash",
    extensions=(".sh", ".bash", ".bats", ".zsh", ".ksh"),
    filenames=(".bashrc", ".bash_profile", ".profile", ".zshrc"),
    interpreters=("bash", "sh", "zsh", "ksh", "dash"),
    definitions="""
        (function_definition name: (word) @name) @definition.function
    """,
    calls="""
        (command name: (command_name (word) @call.name)
            (#not-match? @call.name "^(source|[.])$"))
    """,
    imports="""
        (command name: (command_name (word) @_cmd) . argument: (_) @import.module
            (#match? @_cmd "^(source|[.])$")) @import
    """,
)

_C_FUNCTION_DECLARATOR = """
    (function_declarator declarator: (_) @name)
    (pointer_declarator declarator: (function_declarator declarator: (_) @name))
    (pointer_declarator declarator: (pointer_declarator
        declarator: (function_declarator declarator: (_) @name)))
"""
_CPP_FUNCTION_DECLARATOR = f"""[{_C_FUNCTION_DECLARATOR}
    (reference_declarator (function_declarator declarator: (_) @name))
]"""

_C_DEFINITIONS = f"""
    (function_definition declarator: [{_C_FUNCTION_DECLARATOR}]) @definition.function
    (struct_specifier name: (_) @name body: (_)) @definition.struct
    (union_specifier name: (_) @name body: (_)) @definition.struct
    (enum_specifier name: (_) @name body: (_)) @definition.enum
    (type_definition declarator: (type_identifier) @name) @definition.type
    (preproc_def name: (identifier) @name) @definition.constant
    (preproc_function_def name: (identifier) @name) @definition.macro
"""

_C_CALLS = """
    (call_expression function: (identifier) @call.name)
    (call_expression function: (field_expression argument: (_) @call.qualifier
        field: (field_identifier) @call.name))
"""

_C_IMPORTS = """
    (preproc_include path: (string_literal (string_content) @import.module)) @import
    (preproc_include path: (system_lib_string) @import.module) @import
"""

C = LanguageSpec(
    name="c",
    extensions=(".c", ".h"),
    definitions=_C_DEFINITIONS,
    calls=_C_CALLS,
    imports=_C_IMPORTS,
)

CPP = LanguageSpec(
    name="cpp",
    extensions=(
        ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl",
        ".cu", ".cuh",
    ),
    definitions=_C_DEFINITIONS
    + f"""
    (function_definition declarator: (reference_declarator
        (function_declarator declarator: (_) @name))) @definition.function
    (class_specifier name: (_) @name body: (_)) @definition.class
    (namespace_definition name: (_) @name) @definition.module
    (alias_declaration name: (type_identifier) @name) @definition.type
    (field_declaration declarator: {_CPP_FUNCTION_DECLARATOR}) @definition.method
    (declaration declarator: (function_declarator declarator: (qualified_identifier) @name))
        @definition.method
    """,
    calls=_C_CALLS
    + """
    (call_expression function: (qualified_identifier scope: (_) @call.qualifier
        name: (identifier) @call.name))
    (call_expression function: (template_function name: (identifier) @call.name))
    (call_expression function: (qualified_identifier scope: (_) @call.qualifier
        name: (template_function name: (identifier) @call.name)))
    (call_expression function: (field_expression argument: (_) @call.qualifier
        field: (template_method name: (field_identifier) @call.name)))
    (new_expression type: (type_identifier) @call.name)
    (new_expression type: (qualified_identifier scope: (_) @call.qualifier
        name: (type_identifier) @call.name))
    """,
    imports=_C_IMPORTS,
    inherits="""
        (base_class_clause [(type_identifier) (qualified_identifier) (template_type)]
            @inherit.base)
    """,
    wrappers=frozenset({"template_declaration"}),
    name_separators=("::",),
    qualified_is_method=True,
)

#: Declarations whose syntax C# and Java share, node types and fields alike.
_CLASS_DECLARATIONS = """(class_declaration name: (identifier) @name) @definition.class
        (record_declaration name: (identifier) @name) @definition.class
        (interface_declaration name: (identifier) @name) @definition.interface"""
_METHOD_DECLARATIONS = """(method_declaration name: (identifier) @name) @definition.function
        (constructor_declaration name: (identifier) @name) @definition.function"""

CSHARP = LanguageSpec(
    name="csharp",
    extensions=(".cs", ".csx"),
    definitions=f"""
        {_CLASS_DECLARATIONS}
        (struct_declaration name: (identifier) @name) @definition.struct
        (enum_declaration name: (identifier) @name) @definition.enum
        (delegate_declaration name: (identifier) @name) @definition.type
        (namespace_declaration name: (_) @name) @definition.module
        {_METHOD_DECLARATIONS}
        (local_function_statement name: (identifier) @name) @definition.function
        (field_declaration (modifier) @_const
            (variable_declaration (variable_declarator name: (identifier) @name))
            (#eq? @_const "const")) @definition.constant
    """,
    calls="""
        (invocation_expression function: (identifier) @call.name)
        (invocation_expression function: (generic_name (identifier) @call.name))
        (invocation_expression function: (member_access_expression
            expression: (_) @call.qualifier name: (identifier) @call.name))
        (invocation_expression function: (member_access_expression
            expression: (_) @call.qualifier name: (generic_name (identifier) @call.name)))
        (object_creation_expression type: (identifier) @call.name)
        (object_creation_expression type: (generic_name (identifier) @call.name))
        (object_creation_expression type: (qualified_name qualifier: (_) @call.qualifier
            name: (identifier) @call.name))
    """,
    imports="""
        (using_directive [(identifier) (qualified_name)] @import.module .) @import
    """,
    inherits="""
        (base_list (_) @inherit.base)
    """,
    name_separators=(".",),
)

#: Elixir calls that are language constructs, not calls to functions of the program.
_ELIXIR_KEYWORDS = "|".join(
    [
        "def", "defp", "defmacro", "defmacrop", "defmodule", "defprotocol", "defimpl",
        "defstruct", "defexception", "defguard", "defguardp", "defdelegate", "defoverridable",
        "use", "import", "alias", "require", "quote", "unquote", "if", "unless", "case", "cond",
        "with", "for", "fn", "receive", "try", "raise", "reraise",
    ]
)

ELIXIR = LanguageSpec(
    name="elixir",
    extensions=(".ex", ".exs"),
    interpreters=("elixir",),
    definitions="""
        (call target: (identifier) @_kw (arguments . (alias) @name)
            (#eq? @_kw "defmodule")) @definition.module
        (call target: (identifier) @_kw (arguments . (alias) @name)
            (#eq? @_kw "defprotocol")) @definition.interface
        (call target: (identifier) @_kw
            (arguments . [
                (call target: (identifier) @name)
                (identifier) @name
                (binary_operator left: (call target: (identifier) @name))
            ])
            (#match? @_kw "^(def|defp|defguard|defguardp|defdelegate)$")) @definition.function
        (call target: (identifier) @_kw
            (arguments . [
                (call target: (identifier) @name)
                (identifier) @name
                (binary_operator left: (call target: (identifier) @name))
            ])
            (#match? @_kw "^(defmacro|defmacrop)$")) @definition.macro
    """,
    calls=f"""
        (unary_operator operator: "@" operand: (call target: (identifier) @call.ignore))
        (call target: (identifier) @call.name (#not-match? @call.name "^({_ELIXIR_KEYWORDS})$"))
        (call target: (dot left: (_) @call.qualifier right: (identifier) @call.name))
    """,
    imports="""
        (call target: (identifier) @_kw (arguments . (alias) @import.module)
            (#match? @_kw "^(import|alias|require|use)$")) @import
        (call target: (identifier) @_kw
            (arguments . (dot left: (alias) @import.module right: (tuple (alias) @import.name)))
            (#match? @_kw "^(import|alias|require|use)$")) @import
    """,
    inherits="""
        (unary_operator
            operand: (call target: (identifier) @_attr (arguments . (alias) @inherit.base))
            (#eq? @_attr "behaviour"))
        (call target: (identifier) @_kw (arguments . (alias) @inherit.base)
            (#eq? @_kw "defimpl"))
    """,
    docs="""
        (unary_operator operand: (call target: (identifier) @_attr (arguments . (_) @doc))
            (#match? @_attr "^(doc|typedoc)$"))
        (unary_operator operand: (call target: (identifier) @_attr (arguments . (_) @doc.inner))
            (#eq? @_attr "moduledoc"))
    """,
    attributes=frozenset({"unary_operator"}),
    body_types=frozenset({"do_block"}),
    name_separators=(".",),
    merge_clauses=True,
)

GO = LanguageSpec(
    name="go",
    extensions=(".go",),
    definitions="""
        (function_declaration name: (identifier) @name) @definition.function
        (method_declaration
            receiver: (parameter_list (parameter_declaration type: (_) @receiver))
            name: (field_identifier) @name) @definition.method
        (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
        (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
        (type_spec name: (type_identifier) @name) @definition.type
        (type_alias name: (type_identifier) @name) @definition.type
        (method_elem name: (field_identifier) @name) @definition.method
        (const_spec name: (identifier) @name) @definition.constant
        (source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
    """,
    calls="""
        (call_expression function: (identifier) @call.name)
        (call_expression function: (selector_expression operand: (_) @call.qualifier
            field: (field_identifier) @call.name))
    """,
    imports="""
        (import_spec path: (interpreted_string_literal
            (interpreted_string_literal_content) @import.module)) @import
    """,
    inherits="""
        (field_declaration_list (field_declaration !name type: (_) @inherit.base))
        (interface_type (type_elem . [(type_identifier) (qualified_type)] @inherit.base .))
    """,
    wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
)

HASKELL = LanguageSpec(
    name="haskell",
    extensions=(".hs",),
    interpreters=("runghc", "runhaskell", "stack"),
    definitions="""
        (function name: (variable) @name) @definition.function
        (bind name: (variable) @name) @definition.function
        (class_declarations (signature name: (variable) @name) @definition.function)
        (data_type name: (name) @name) @definition.type
        (newtype name: (name) @name) @definition.type
        (type_synomym name: (name) @name) @definition.type
        (type_family name: (name) @name) @definition.type
        (class name: (name) @name) @definition.interface
        (instance patterns: (type_patterns . (_) @name)) @definition.scope
    """,
    calls="""
        (apply function: (variable) @call.name)
        (apply function: (qualified module: (_) @call.qualifier id: (variable) @call.name))
    """,
    imports="""
        (import module: (module) @import.module) @import
        (import module: (module) @import.module names: (import_list (import_name) @import.name))
            @import
    """,
    inherits="""
        (instance name: (_) @inherit.base)
    """,
    docs="""
        (signature name: (variable) @name) @signature
    """,
    comments=frozenset({"comment", "haddock"}),
    body_types=frozenset({"class_declarations", "instance_declarations"}),
    merge_clauses=True,
)

JAVA = LanguageSpec(
    name="java",
    extensions=(".java",),
    definitions=f"""
        {_CLASS_DECLARATIONS}
        (annotation_type_declaration name: (identifier) @name) @definition.interface
        (enum_declaration name: (identifier) @name) @definition.enum
        {_METHOD_DECLARATIONS}
        (field_declaration (modifiers) @_mods
            declarator: (variable_declarator name: (identifier) @name)
            (#match? @_mods "static[^=]*final|final[^=]*static")) @definition.constant
    """,
    calls="""
        (method_invocation !object name: (identifier) @call.name)
        (method_invocation object: (_) @call.qualifier name: (identifier) @call.name)
        (object_creation_expression
            type: [(type_identifier) (generic_type) (scoped_type_identifier)] @call.name)
    """,
    imports="""
        (import_declaration [(identifier) (scoped_identifier)] @import.module .) @import
        (import_declaration [(identifier) (scoped_identifier)] @import.module
            (asterisk) @import.name) @import
    """,
    inherits="""
        (superclass (_) @inherit.base)
        (super_interfaces (type_list (_) @inherit.base))
        (extends_interfaces (type_list (_) @inherit.base))
    """,
    comments=frozenset({"line_comment", "block_comment"}),
)

_JS_DEFINITIONS = """
    (class_declaration name: (_) @name) @definition.class
    (function_declaration name: (identifier) @name) @definition.function
    (generator_function_declaration name: (identifier) @name) @definition.function
    (method_definition name: (_) @name) @definition.function
    (lexical_declaration (variable_declarator name: (identifier) @name
        value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
        @definition.function
    (variable_declaration (variable_declarator name: (identifier) @name
        value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
        @definition.function
    (expression_statement (assignment_expression left: (member_expression) @name
        right: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]))
        @definition.function
    (pair key: (property_identifier) @name
        value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)])
        @definition.function
    (program (lexical_declaration (variable_declarator name: (identifier) @name))
        @definition.constant (#match? @name """ + _UPPER + """))
    (export_statement (lexical_declaration (variable_declarator name: (identifier) @name))
        @definition.constant (#match? @name """ + _UPPER + """))
    (program (lexical_declaration (variable_declarator name: (identifier) @name
        value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
    (export_statement (lexical_declaration (variable_declarator name: (identifier) @name
        value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
    (program (variable_declaration (variable_declarator name: (identifier) @name
        value: (_) @_value)) @definition.variable (#not-match? @_value "^require *[(]"))
"""

_JS_FIELD_FUNCTION = """
    (field_definition property: (_) @name value: (arrow_function body: (_) @body))
        @definition.function
"""

_JS_CALLS = """
    (call_expression function: (identifier) @call.name)
    (call_expression function: (member_expression object: (_) @call.qualifier
        property: (property_identifier) @call.name))
    (new_expression constructor: (identifier) @call.name)
    (new_expression constructor: (member_expression object: (_) @call.qualifier
        property: (property_identifier) @call.name))
"""

_JS_IMPORTS = """
    (import_statement source: (string (string_fragment) @import.module)) @import
    (import_statement (import_clause (named_imports (import_specifier name: (_) @import.name)))
        source: (string (string_fragment) @import.module)) @import
    (import_statement (import_clause (identifier) @import.name)
        source: (string (string_fragment) @import.module)) @import
    (import_statement (import_clause (namespace_import) @import.name)
        source: (string (string_fragment) @import.module)) @import
    (export_statement source: (string (string_fragment) @import.module)) @import
    (call_expression function: (identifier) @_require
        arguments: (arguments . (string (string_fragment) @import.module))
        (#eq? @_require "require")) @import
    (call_expression function: (import)
        arguments: (arguments . (string (string_fragment) @import.module))) @import
"""

JAVASCRIPT = LanguageSpec(
    name="javascript",
    extensions=(".js", ".mjs", ".cjs", ".jsx"),
    interpreters=("node", "nodejs"),
    definitions=_JS_DEFINITIONS + _JS_FIELD_FUNCTION,
    calls=_JS_CALLS,
    imports=_JS_IMPORTS,
    inherits="""
        (class_heritage (_) @inherit.base)
    """,
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
)

_TS_DEFINITIONS = (
    _JS_DEFINITIONS
    + """
    (abstract_class_declaration name: (_) @name) @definition.class
    (interface_declaration name: (_) @name) @definition.interface
    (type_alias_declaration name: (_) @name) @definition.type
    (enum_declaration name: (_) @name) @definition.enum
    (internal_module name: (_) @name) @definition.module
    (method_signature name: (_) @name) @definition.function
    (abstract_method_signature name: (_) @name) @definition.function
    (function_signature name: (identifier) @name) @definition.function
    (public_field_definition name: (_) @name value: (arrow_function body: (_) @body))
        @definition.function
"""
)

_TS_INHERITS = """
    (extends_clause value: (_) @inherit.base)
    (implements_clause (_) @inherit.base)
    (extends_type_clause type: (_) @inherit.base)
"""

TYPESCRIPT = LanguageSpec(
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    interpreters=("deno", "ts-node", "tsx"),
    definitions=_TS_DEFINITIONS,
    calls=_JS_CALLS,
    imports=_JS_IMPORTS,
    inherits=_TS_INHERITS,
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
)

TSX = LanguageSpec(
    name="tsx",
    extensions=(".tsx",),
    definitions=_TS_DEFINITIONS,
    calls=_JS_CALLS,
    imports=_JS_IMPORTS,
    inherits=_TS_INHERITS,
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    name_separators=(".",),
    ignored_qualifiers=("prototype", "exports", "module"),
)

KOTLIN = LanguageSpec(
    name="kotlin",
    extensions=(".kt", ".kts"),
    definitions="""
        (class_declaration "interface" (type_identifier) @name) @definition.interface
        (class_declaration "enum" (type_identifier) @name) @definition.enum
        (class_declaration (type_identifier) @name) @definition.class
        (object_declaration (type_identifier) @name) @definition.class
        (function_declaration (receiver_type) @receiver (simple_identifier) @name)
            @definition.function
        (function_declaration (simple_identifier) @name) @definition.function
        (type_alias (type_identifier) @name) @definition.type
        (property_declaration (modifiers (property_modifier) @_mod)
            (variable_declaration (simple_identifier) @name)
            (#eq? @_mod "const")) @definition.constant
        (source_file (property_declaration (variable_declaration (simple_identifier) @name))
            @definition.variable)
    """,
    calls="""
        (call_expression . (simple_identifier) @call.name)
        (call_expression . (navigation_expression (_) @call.qualifier
            (navigation_suffix (simple_identifier) @call.name) .))
    """,
    imports="""
        (import_header (identifier) @import.module) @import
        (import_header (identifier) @import.module (wildcard_import) @import.name) @import
    """,
    inherits="""
        (delegation_specifier (user_type) @inherit.base)
        (delegation_specifier (constructor_invocation (user_type) @inherit.base))
        (delegation_specifier (explicit_delegation (user_type) @inherit.base))
    """,
    comments=frozenset({"line_comment", "multiline_comment"}),
    body_types=frozenset({"function_body", "class_body", "enum_class_body"}),
)

LUA = LanguageSpec(
    name="lua",
    extensions=(".lua",),
    interpreters=("lua", "luajit"),
    definitions="""
        (function_declaration name: (method_index_expression) @name) @definition.method
        (function_declaration name: (_) @name) @definition.function
        (variable_declaration (assignment_statement
            (variable_list . name: (identifier) @name .)
            (expression_list . value: (function_definition body: (_) @body) .)))
            @definition.function
        (assignment_statement
            (variable_list . name: [(dot_index_expression) (identifier)] @name .)
            (expression_list . value: (function_definition body: (_) @body) .))
            @definition.function
    """,
    calls="""
        (function_call name: (identifier) @call.name)
        (function_call name: (dot_index_expression table: (_) @call.qualifier
            field: (identifier) @call.name))
        (function_call name: (method_index_expression table: (_) @call.qualifier
            method: (identifier) @call.name))
    """,
    imports="""
        (function_call name: (identifier) @_require
            arguments: (arguments . (string content: (string_content) @import.module))
            (#eq? @_require "require")) @import
    """,
    name_separators=(".", ":"),
)

PHP = LanguageSpec(
    name="php",
    extensions=(".php", ".phtml", ".php3", ".php4", ".php5", ".php7", ".phps"),
    interpreters=("php",),
    definitions="""
        (class_declaration name: (name) @name) @definition.class
        (interface_declaration name: (name) @name) @definition.interface
        (trait_declaration name: (name) @name) @definition.trait
        (enum_declaration name: (name) @name) @definition.enum
        (function_definition name: (name) @name) @definition.function
        (method_declaration name: (name) @name) @definition.function
        (namespace_definition name: (namespace_name) @name body: (_)) @definition.module
        (const_declaration (const_element (name) @name)) @definition.constant
    """,
    calls="""
        (function_call_expression function: (name) @call.name)
        (function_call_expression function: (qualified_name (name) @call.name .))
        (member_call_expression object: (_) @call.qualifier name: (name) @call.name)
        (nullsafe_member_call_expression object: (_) @call.qualifier name: (name) @call.name)
        (scoped_call_expression scope: (_) @call.qualifier name: (name) @call.name)
        (object_creation_expression [(name) (qualified_name)] @call.name)
    """,
    imports="""
        (namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module))
            @import
        (namespace_use_declaration (namespace_name) @import.module
            body: (namespace_use_group
                (namespace_use_clause [(name) (qualified_name)] @import.name))) @import
        (include_expression (string (string_content) @import.module)) @import
        (include_once_expression (string (string_content) @import.module)) @import
        (require_expression (string (string_content) @import.module)) @import
        (require_once_expression (string (string_content) @import.module)) @import
    """,
    inherits="""
        (base_clause [(name) (qualified_name)] @inherit.base)
        (class_interface_clause [(name) (qualified_name)] @inherit.base)
        (use_declaration [(name) (qualified_name)] @inherit.base)
    """,
    attributes=frozenset({"attribute_list"}),
    name_separators=("\\",),
)

PYTHON = LanguageSpec(
    name="python",
    extensions=(".py", ".pyi", ".pyw"),
    interpreters=("python", "python2", "python3", "pypy", "pypy3"),
    definitions="""
        (class_definition name: (identifier) @name) @definition.class
        (function_definition name: (identifier) @name) @definition.function
        (module (assignment left: (identifier) @name) @definition.constant
            (#match? @name """ + _UPPER + """))
        (module (assignment left: (identifier) @name) @definition.variable)
        (class_definition body: (block (assignment left: (identifier) @name) @definition.constant)
            (#match? @name """ + _UPPER + """))
    """,
    calls="""
        (call function: (identifier) @call.name)
        (call function: (attribute object: (_) @call.qualifier attribute: (identifier) @call.name))
    """,
    imports="""
        (import_statement name: (dotted_name) @import.module) @import
        (import_statement name: (aliased_import name: (dotted_name) @import.module)) @import
        (import_from_statement module_name: (_) @import.module
            name: [(dotted_name) @import.name (aliased_import name: (dotted_name) @import.name)])
            @import
        (import_from_statement module_name: (_) @import.module (wildcard_import) @import.name)
            @import
    """,
    inherits="""
        (class_definition superclasses: (argument_list [(identifier) (attribute) (subscript)]
            @inherit.base))
    """,
    docs="""
        (function_definition body: (block . (string) @doc.inner))
        (class_definition body: (block . (string) @doc.inner))
    """,
    attributes=frozenset({"decorator"}),
    wrappers=frozenset({"decorated_definition"}),
)

RUBY = LanguageSpec(
    name="ruby",
    extensions=(".rb", ".rake", ".gemspec", ".ru"),
    filenames=("Rakefile", "Gemfile", "Guardfile", "Vagrantfile", "Podfile", "Brewfile"),
    interpreters=("ruby", "jruby"),
    definitions="""
        (class name: (_) @name) @definition.class
        (module name: (_) @name) @definition.module
        (method name: (_) @name) @definition.function
        (singleton_method name: (_) @name) @definition.function
        (assignment left: (constant) @name) @definition.constant
    """,
    calls="""
        (call !receiver method: (identifier) @call.name)
        (call receiver: (_) @call.qualifier method: (_) @call.name)
    """,
    imports="""
        (call !receiver method: (identifier) @_require
            arguments: (argument_list . (string (string_content) @import.module))
            (#match? @_require "^(require|require_relative|load|autoload)$")) @import
    """,
    inherits="""
        (class superclass: (superclass (_) @inherit.base))
        (call !receiver method: (identifier) @_mixin
            arguments: (argument_list [(constant) (scope_resolution)] @inherit.base)
            (#match? @_mixin "^(include|extend|prepend)$"))
    """,
    name_separators=("::",),
)

RUST = LanguageSpec(
    name="rust",
    extensions=(".rs",),
    definitions="""
        (function_item name: (identifier) @name) @definition.function
        (function_signature_item name: (identifier) @name) @definition.function
        (struct_item name: (type_identifier) @name) @definition.struct
        (union_item name: (type_identifier) @name) @definition.struct
        (enum_item name: (type_identifier) @name) @definition.enum
        (trait_item name: (type_identifier) @name) @definition.trait
        (type_item name: (type_identifier) @name) @definition.type
        (const_item name: (identifier) @name) @definition.constant
        (static_item name: (identifier) @name) @definition.constant
        (macro_definition name: (identifier) @name) @definition.macro
        (mod_item name: (identifier) @name body: (_)) @definition.module
        (impl_item type: (_) @name) @definition.scope
    """,
    calls="""
        (call_expression function: (identifier) @call.name)
        (call_expression function: (scoped_identifier path: (_) @call.qualifier
            name: (identifier) @call.name))
        (call_expression function: (field_expression value: (_) @call.qualifier
            field: (field_identifier) @call.name))
        (call_expression function: (generic_function function: (identifier) @call.name))
        (call_expression function: (generic_function function: (scoped_identifier
            path: (_) @call.qualifier name: (identifier) @call.name)))
        (call_expression function: (generic_function function: (field_expression
            value: (_) @call.qualifier field: (field_identifier) @call.name)))
        (macro_invocation macro: (identifier) @call.name)
        (macro_invocation macro: (scoped_identifier path: (_) @call.qualifier
            name: (identifier) @call.name))
    """,
    imports="""
        (use_declaration argument: [(scoped_identifier) (identifier) (use_wildcard)
            (crate) (self) (super)] @import.module) @import
        (use_declaration argument: (use_as_clause path: (_) @import.module)) @import
        (use_declaration argument: (scoped_use_list path: (_) @import.module
            list: (use_list (_) @import.name))) @import
        (use_declaration argument: (use_list (_) @import.module)) @import
        (extern_crate_declaration name: (identifier) @import.module) @import
        (mod_item !body name: (identifier) @import.module) @import
    """,
    inherits="""
        (impl_item trait: (_) @inherit.base)
        (trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier)
            (generic_type)] @inherit.base))
    """,
    comments=frozenset({"line_comment", "block_comment"}),
    attributes=frozenset({"attribute_item"}),
)

SCALA = LanguageSpec(
    name="scala",
    extensions=(".scala", ".sc", ".sbt"),
    interpreters=("scala",),
    definitions="""
        (class_definition name: (identifier) @name) @definition.class
        (object_definition name: (identifier) @name) @definition.class
        (trait_definition name: (identifier) @name) @definition.trait
        (enum_definition name: (identifier) @name) @definition.enum
        (function_definition name: (identifier) @name) @definition.function
        (function_declaration name: (identifier) @name) @definition.function
        (type_definition name: (type_identifier) @name) @definition.type
        (template_body (val_definition pattern: (identifier) @name) @definition.constant
            (#match? @name "^[A-Z]"))
    """,
    calls="""
        (call_expression function: (identifier) @call.name)
        (call_expression function: (field_expression value: (_) @call.qualifier
            field: (identifier) @call.name))
        (call_expression function: (generic_function function: (identifier) @call.name))
        (instance_expression (type_identifier) @call.name)
        (instance_expression (generic_type type: (type_identifier) @call.name))
    """,
    imports="""
        (import_declaration (identifier) @import.module.part) @import
        (import_declaration (namespace_selectors [(identifier) @import.name
            (arrow_renamed_identifier name: (_) @import.name)])) @import
        (import_declaration (namespace_wildcard) @import.name) @import
    """,
    inherits="""
        (extends_clause [(type_identifier) (generic_type) (stable_type_identifier)]
            @inherit.base)
    """,
    comments=frozenset({"comment", "block_comment"}),
    attributes=frozenset({"annotation"}),
)

SWIFT = LanguageSpec(
    name="swift",
    extensions=(".swift",),
    definitions="""
        (class_declaration "struct" name: (type_identifier) @name) @definition.struct
        (class_declaration "enum" name: (type_identifier) @name) @definition.enum
        (class_declaration "extension" name: (_) @name) @definition.scope
        (class_declaration name: (type_identifier) @name) @definition.class
        (protocol_declaration name: (type_identifier) @name) @definition.interface
        (function_declaration name: (simple_identifier) @name) @definition.function
        (protocol_function_declaration name: (simple_identifier) @name) @definition.function
        (init_declaration "init" @name) @definition.function
        (deinit_declaration "deinit" @name) @definition.function
        (typealias_declaration name: (type_identifier) @name) @definition.type
    """,
    calls="""
        (call_expression . (simple_identifier) @call.name)
        (call_expression . (navigation_expression target: (_) @call.qualifier
            suffix: (navigation_suffix suffix: (simple_identifier) @call.name)))
    """,
    imports="""
        (import_declaration (identifier) @import.module) @import
    """,
    inherits="""
        (inheritance_specifier inherits_from: (_) @inherit.base)
    """,
    comments=frozenset({"comment", "multiline_comment"}),
)

ZIG = LanguageSpec(
    name="zig",
    extensions=(".zig", ".zon"),
    definitions="""
        (Decl (FnProto function: (IDENTIFIER) @name) (Block) @body) @definition.function
        (Decl (FnProto function: (IDENTIFIER) @name)) @definition.function
        (Decl (VarDecl variable_type_function: (IDENTIFIER) @name
            (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_type))))
            (#match? @_type "^enum")) @definition.enum
        (Decl (VarDecl variable_type_function: (IDENTIFIER) @name
            (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_type))))
            (#match? @_type "^(struct|union)")) @definition.struct
        (Decl (VarDecl variable_type_function: (IDENTIFIER) @name
            (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType) @_type))))
            (#match? @_type "^opaque")) @definition.type
        (Decl (VarDecl "const" variable_type_function: (IDENTIFIER) @name)
            (#match? @name """ + _UPPER + """)) @definition.constant
    """,
    calls="""
        (SuffixExpr variable_type_function: (IDENTIFIER) @call.name . (FnCallArguments))
        (SuffixExpr (FieldOrFnCall function_call: (IDENTIFIER) @call.name)) @call.callee
    """,
    imports="""
        (SuffixExpr (BUILTINIDENTIFIER) @_builtin
            (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @import.module)))
            (#eq? @_builtin "@import")) @import
    """,
    comments=frozenset({"line_comment", "doc_comment", "container_doc_comment"}),
)

#: Every language maguyva parses, by name.
LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        BASH, C, CPP, CSHARP, ELIXIR, GO, HASKELL, JAVA, JAVASCRIPT, KOTLIN, LUA, PHP, PYTHON,
        RUBY, RUST, SCALA, SWIFT, TYPESCRIPT, TSX, ZIG,
    )
}
