/* STDIO corners for libiolab-buffer: freopen to another file and to the same one (NULL
 * path), fdopen on a buffered descriptor mixed with write(), fsync(fileno(fp)), ftell
 * after "a" opens.  stdio_misc DIR: writes DIR/m1.dat, m2.dat, m3.dat; prints positions. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char p1[4096], p2[4096], p3[4096];
    snprintf(p1, sizeof p1, "%s/m1.dat", argv[1]);
    snprintf(p2, sizeof p2, "%s/m2.dat", argv[1]);
    snprintf(p3, sizeof p3, "%s/m3.dat", argv[1]);
    FILE *fp = fopen(p1, "w");
    for (int i = 0; i < 3000; i++)
        fprintf(fp, "first %d\n", i);
    fp = freopen(p2, "w", fp);
    for (int i = 0; i < 3000; i++)
        fprintf(fp, "second %d\n", i);
    fp = freopen(NULL, "a", fp); /* same file, appending */
    printf("after freopen a: %ld\n", ftell(fp));
    fputs("appended\n", fp);
    if (fflush(fp) || fsync(fileno(fp)) || fclose(fp))
        return 1;
    fp = fopen(p1, "a");
    printf("fopen a: %ld\n", ftell(fp));
    fclose(fp);
    int fd = open(p3, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 100; i++)
        if (write(fd, "0123456789abcdef", 16) != 16)
            return 1;
    FILE *g = fdopen(fd, "w");
    fprintf(g, "via fdopen\n");
    fflush(g);
    if (write(fd, "raw\n", 4) != 4)
        return 1;
    printf("fdopen: %ld\n", ftell(g));
    return fclose(g) != 0;
}
