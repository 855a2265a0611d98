/* Only calls that Darshan 3.5 intercepts, for the agreement test of the standard streams,
 * formatted I/O, fsetpos and rename (tests/profile/darshan/stdio_darshan.darshan is Darshan's
 * log of this program): 2 printf and fflush(stdout); fprintf(stderr); a text file written
 * with fprintf and fputs, read back with fscanf and fgets, fsetpos, fread; a POSIX file
 * renamed with rename(). Usage: stdio_darshan DIR */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096], other[4096], buf[64];
    int a, b;
    fpos_t pos;
    if (argc != 2)
        return 2;
    printf("%s: %d\n", "answer", 42);                 /* 11 bytes on <STDOUT> */
    printf("%05.1f\n", 2.5);                          /* 6 */
    fflush(stdout);
    fprintf(stderr, "%s\n", "to stderr");             /* 10 on <STDERR> */
    snprintf(path, sizeof path, "%s/text.txt", argv[1]);
    FILE *f = fopen(path, "w");
    fprintf(f, "%d %d\n", 12, 345);                   /* 7 */
    fputs("second line\n", f);                        /* 12 */
    fclose(f);
    f = fopen(path, "r");
    fgetpos(f, &pos);
    if (fscanf(f, "%d %d", &a, &b) != 2)              /* 6 bytes: "12 345" */
        return 3;
    if (!fgets(buf, sizeof buf, f) || !fgets(buf, sizeof buf, f)) /* "\n", "second line\n" */
        return 4;
    fsetpos(f, &pos);
    if (fread(buf, 1, 19, f) != 19)                   /* the whole file again */
        return 5;
    fclose(f);
    snprintf(path, sizeof path, "%s/old.dat", argv[1]);
    snprintf(other, sizeof other, "%s/new.dat", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "12345678", 8) != 8)
        return 6;
    close(fd);
    return rename(path, other) == 0 ? 0 : 7;
}
