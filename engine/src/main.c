/* iolab-bench: entry point. */
#include "driver.h"

int main(int argc, char **argv)
{
    return iolab_driver_main(argc, argv);
}
