/* STDIO of every kind on one stream, with fsync(fileno()) in the middle. Usage: stdio_mix PATH */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char buf[512], line[64];
    if (argc != 2)
        return 2;
    memset(buf, 'q', sizeof buf);
    FILE *f = fopen(argv[1], "w+");
    if (!f)
        return 1;
    fprintf(f, "%d\n", 12345);
    fprintf(f, "%s", "abc");
    fprintf(f, "x%cy\n", 'z');
    fputs("hello\n", f);
    fputs("end\n", f);
    for (int i = 0; i < 5; i++)
        fputc('a' + i, f);
    fwrite(buf, sizeof buf, 1, f);
    fflush(f);
    if (fsync(fileno(f)) != 0)
        return 1;
    fseek(f, 0, SEEK_SET);
    if (!fgets(line, sizeof line, f))
        return 1;
    for (int i = 0; i < 3; i++)
        fgetc(f);
    rewind(f);
    if (fread(buf, 1, 100, f) != 100)
        return 1;
    fclose(f);
    return 0;
}
