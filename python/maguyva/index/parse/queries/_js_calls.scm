;; JavaScript's calls, which TypeScript has too.
(call_expression function: (identifier) @call.name)
(call_expression function: (member_expression object: (_) @call.qualifier
    property: (property_identifier) @call.name))
(new_expression constructor: (identifier) @call.name)
(new_expression constructor: (member_expression object: (_) @call.qualifier
    property: (property_identifier) @call.name))
;; uses: a name passed as a value (`app.use(logger)`, `items.map(this.render)`)
(call_expression arguments: (arguments (identifier) @use.name))
(call_expression arguments: (arguments (member_expression object: (_) @use.qualifier property: (property_identifier) @use.name)))
