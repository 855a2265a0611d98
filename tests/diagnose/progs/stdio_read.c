/* A serial program that only reads: the whole file through fread in RECORD-byte calls.
 * Usage: stdio_read PATH RECORD */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL)
        return 1;
    size_t record = (size_t)atol(argv[2]), n, total = 0;
    char *buf = malloc(record);
    while ((n = fread(buf, 1, record, f)) > 0)
        total += n;
    fclose(f);
    free(buf);
    printf("%zu\n", total);
    return 0;
}
