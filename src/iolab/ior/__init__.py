"""``iolab ior``: IOR 4's command language (options, ``-O`` directives, ``-f`` scripts) run on
iolab's engine, with IOR's report (text, JSON, CSV). Parse, map, output: one module each."""
