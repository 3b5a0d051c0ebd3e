"""Tree-sitter tag queries, one pair (definitions, references) per language.

Written for bonsai; aider's and the grammars' ``tags.scm`` files were the guide.
Conventions:

* a definition pattern captures the whole node as ``@definition.KIND`` and its
  name as ``@name``; the signature is cut from the definition node;
* a reference pattern captures the referenced identifier as ``@ref``;
* a pattern rooted at the tree's root node (a module-level constant) goes in
  ``top_level``: it runs on a cursor that starts no match below the root
  (``QueryCursor.set_max_start_depth(0)``), which descends only as far as the
  pattern's own steps. In the general query its root's state stays open over
  the whole walk and every node visited tests it (2% of a parse, measured).

References are deliberately broader than aider's "calls only": type uses,
imported names, base classes and decorators are the strongest signals of which
file depends on which.
"""

from __future__ import annotations

from typing import NamedTuple


class TagQueries(NamedTuple):
    definitions: str
    references: str
    top_level: str = ""  # definition patterns rooted at the root node (see above)


PYTHON = TagQueries(
    definitions="""
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
""",
    top_level="""(module (expression_statement
  (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Za-z0-9_]*$"))
""",
    references="""
(call function: (identifier) @ref)
(attribute attribute: (identifier) @ref)
(argument_list (identifier) @ref)
(decorator (identifier) @ref)
(type (identifier) @ref)
(import_from_statement name: (dotted_name (identifier) @ref))
(aliased_import name: (dotted_name (identifier) @ref))
""",
)

_JS_DEFS = """
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (property_identifier) @name) @definition.method
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
"""

_JS_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (member_expression property: (property_identifier) @ref))
(new_expression constructor: (identifier) @ref)
(import_specifier name: (identifier) @ref)
"""

JAVASCRIPT = TagQueries(
    definitions=_JS_DEFS + "(class_declaration name: (identifier) @name) @definition.class\n",
    references=_JS_REFS
    + """
(class_heritage (identifier) @ref)
(jsx_opening_element name: (identifier) @ref)
(jsx_self_closing_element name: (identifier) @ref)
""",
)

_TS_DEFS = (
    _JS_DEFS
    + """
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
"""
)

_TS_REFS = (
    _JS_REFS
    + """
(type_identifier) @ref
(extends_clause value: (identifier) @ref)
"""
)

TYPESCRIPT = TagQueries(definitions=_TS_DEFS, references=_TS_REFS)
TSX = TagQueries(
    definitions=_TS_DEFS,
    references=_TS_REFS
    + """
(jsx_opening_element name: (identifier) @ref)
(jsx_self_closing_element name: (identifier) @ref)
""",
)

GO = TagQueries(
    definitions="""
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
""",
    top_level="(source_file (const_declaration (const_spec name: (identifier) @name)"
    " @definition.constant))\n",
    references="""
(call_expression function: (identifier) @ref)
(call_expression function: (selector_expression field: (field_identifier) @ref))
(type_identifier) @ref
""",
)

RUST = TagQueries(
    definitions="""
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(impl_item type: (type_identifier) @name) @definition.impl
""",
    references="""
(call_expression function: (identifier) @ref)
(call_expression function: (field_expression field: (field_identifier) @ref))
(call_expression function: (scoped_identifier name: (identifier) @ref))
(macro_invocation macro: (identifier) @ref)
(type_identifier) @ref
(use_list (identifier) @ref)
(scoped_use_list list: (use_list (identifier) @ref))
(use_declaration argument: (scoped_identifier name: (identifier) @ref))
""",
)

JAVA = TagQueries(
    definitions="""
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
""",
    references="""
(method_invocation name: (identifier) @ref)
(type_identifier) @ref
(marker_annotation name: (identifier) @ref)
(annotation name: (identifier) @ref)
""",
)

_C_DEFS = """
(function_definition declarator: (function_declarator declarator: (identifier) @name))
  @definition.function
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(declaration declarator: (function_declarator declarator: (identifier) @name))
  @definition.function
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_function_def name: (identifier) @name) @definition.macro
(preproc_def name: (identifier) @name) @definition.macro
"""

_C_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (field_expression field: (field_identifier) @ref))
(type_identifier) @ref
"""

C = TagQueries(definitions=_C_DEFS, references=_C_REFS)

CPP = TagQueries(
    definitions=_C_DEFS
    + """
(function_definition declarator: (function_declarator
  declarator: (field_identifier) @name)) @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name))) @definition.method
(field_declaration declarator: (function_declarator
  declarator: (field_identifier) @name)) @definition.method
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition name: (namespace_identifier) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
""",
    references=_C_REFS
    + """
(call_expression function: (qualified_identifier name: (identifier) @ref))
(qualified_identifier name: (type_identifier) @ref)
""",
)

C_SHARP = TagQueries(
    definitions="""
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.property
(delegate_declaration name: (identifier) @name) @definition.type
""",
    references="""
(invocation_expression function: (identifier) @ref)
(invocation_expression function: (member_access_expression name: (identifier) @ref))
(object_creation_expression type: (identifier) @ref)
(base_list (identifier) @ref)
(variable_declaration type: (identifier) @ref)
(parameter type: (identifier) @ref)
(generic_name (identifier) @ref)
""",
)

RUBY = TagQueries(
    definitions="""
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(class name: (constant) @name) @definition.class
(class name: (scope_resolution name: (constant) @name)) @definition.class
(module name: (constant) @name) @definition.module
""",
    references="""
(call method: (identifier) @ref)
(call receiver: (constant) @ref)
(superclass (constant) @ref)
(scope_resolution name: (constant) @ref)
(argument_list (constant) @ref)
""",
)

PHP = TagQueries(
    definitions="""
(function_definition name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.method
""",
    references="""
(function_call_expression function: (name) @ref)
(function_call_expression function: (qualified_name (name) @ref))
(member_call_expression name: (name) @ref)
(scoped_call_expression name: (name) @ref)
(object_creation_expression (name) @ref)
(object_creation_expression (qualified_name (name) @ref))
(base_clause (name) @ref)
(class_interface_clause (name) @ref)
(named_type (name) @ref)
""",
)

QUERIES: dict[str, TagQueries] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
    "c_sharp": C_SHARP,
    "ruby": RUBY,
    "php": PHP,
}
