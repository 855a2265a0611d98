"""The measured-run model: the engine's JSON document (``docs/engine-json.md``) read once into
typed values (:func:`iolab.runs.engine_doc.from_json`), below results, pages, sweep, study,
compare and tune, which read runs through it rather than walking the raw dict."""
