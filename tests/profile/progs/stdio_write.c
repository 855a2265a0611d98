/* As Darshan's stdio_write: fopen(PATH, "w"), N fwrite() of one S-byte element, fclose.
 * Usage: stdio_write PATH N S */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    long n = atol(argv[2]);
    size_t s = (size_t)atol(argv[3]);
    char *buf = calloc(1, s);
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    for (long i = 0; i < n; i++)
        if (fwrite(buf, s, 1, f) != 1)
            return 1;
    fclose(f);
    free(buf);
    return 0;
}
