/* A progress log written the costly way: N lines, each fprintf'd, fflush'd and fsync'd.
 * Usage: flush_log PATH N */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++) {
        fprintf(f, "step %ld done\n", i);
        fflush(f);
        fsync(fileno(f));
    }
    return fclose(f) != 0;
}
