"""The catalogue of MPI-IO settings (:mod:`.catalogue`) and the writers of their syntaxes
(:mod:`.apply`)."""
