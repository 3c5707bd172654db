;; JavaScript's calls, which TypeScript has too.
;; Each form of a call (and of `new`, and of a use) an alternative of one pattern: a pattern a
;; form compiled each.
(call_expression function: [
    (identifier) @call.name
    (member_expression object: (_) @call.qualifier property: (property_identifier) @call.name)
])
(new_expression constructor: [
    (identifier) @call.name
    (member_expression object: (_) @call.qualifier property: (property_identifier) @call.name)
])
;; uses: a name passed as a value (`app.use(logger)`, `items.map(this.render)`)
(call_expression arguments: (arguments [
    (identifier) @use.name
    (member_expression object: (_) @use.qualifier property: (property_identifier) @use.name)
]))
