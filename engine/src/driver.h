/* iolab-bench: the driver: options, validation, repetitions, clean-up, output. */
#ifndef IOLAB_DRIVER_H
#define IOLAB_DRIVER_H

/* The whole program (MPI_Init .. MPI_Finalize). Returns the exit code: 0 ok, 1 the run failed
 * (I/O error, verify mismatch; the JSON says which), 2 bad input, 130 interrupted. */
int iolab_driver_main(int argc, char **argv);

#endif
