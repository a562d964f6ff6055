"""The built-in log formats, one module each, named after its format (``claude_code`` registers
``claude-code``): each module is a home of :data:`models.importers.FORMATS`, which names them in
the order ``--from`` lists them (:data:`models.importers.BUILT_IN_FORMATS`). A lookup of one
format imports its module alone; a listing imports them all. Importing this package imports none
of them. Adding a format is one new module here that calls
:func:`~models.importers.register_format`, and its name in that list (an extension calls
``turncheck.register_format`` from its own module)."""
