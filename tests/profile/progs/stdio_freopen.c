/* freopen moves a stream to another file; stdout can be reopened onto a file.
 * Usage: stdio_freopen A B */
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *f = fopen(argv[1], "w");
    fputs("one\n", f);
    f = freopen(argv[2], "w", f);
    fputs("two!\n", f);
    fclose(f);
    if (!freopen(argv[1], "a", stdout))
        return 1;
    fputs("three\n", stdout);
    return 0;
}
