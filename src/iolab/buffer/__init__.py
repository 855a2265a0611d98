"""``iolab buffer``: run a program with libiolab-buffer.so, an open IOBUF (write-behind,
read-ahead), and print its IOBUF-style statistics."""
