/* The standard streams and the STDIO calls beyond fread/fwrite: printf, puts, putchar,
 * fputs_unlocked to stdout, fprintf to stderr, scanf and getchar from stdin; a file written
 * with fprintf and read back with fscanf, getline, fsetpos, fread; a POSIX file renamed
 * twice (rename, renameat) and a rename that fails; the same relative name opened before and
 * after a chdir (two files: the tracer's last-path cache must not mix them). Reads "7 z" on
 * stdin.
 * Usage: stdio_std DIR */
#define _GNU_SOURCE /* fputs_unlocked */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void std_streams(void)
{
    int x = 0;
    printf("%d items\n", 42);        /* 9 bytes, formatted */
    puts("hello");                   /* 6 bytes (with the newline), character */
    putchar('x');                    /* 1 */
    fputs_unlocked("ab\n", stdout);  /* 3 */
    fprintf(stderr, "warn %s\n", "me"); /* 8 bytes on <STDERR> */
    if (scanf("%d", &x) != 1 || x != 7) /* a pipe: 0 bytes, as Darshan (ftell) */
        exit(3);
    if (getchar() != ' ')            /* 1 byte */
        exit(4);
}

static void text_file(const char *dir)
{
    char path[4096], buf[16], *line = NULL;
    size_t cap = 0;
    int a, b, c;
    fpos_t pos;
    snprintf(path, sizeof path, "%s/data.txt", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "1 2 3\nline two\n");                   /* 15 bytes */
    fclose(f);
    f = fopen(path, "r");
    fgetpos(f, &pos);
    if (fscanf(f, "%d %d %d", &a, &b, &c) != 3)      /* 5 bytes: "1 2 3" */
        exit(5);
    if (getline(&line, &cap, f) != 1 || getline(&line, &cap, f) != 9) /* "\n", "line two\n" */
        exit(6);
    if (getline(&line, &cap, f) != -1)               /* end: not counted */
        exit(7);
    fsetpos(f, &pos);                                /* a seek */
    if (fread(buf, 1, 5, f) != 5)                     /* 5 bytes */
        exit(8);
    fclose(f);
    free(line);
}

static void renames(const char *dir)
{
    char a[4096], b[4096], c[4096];
    snprintf(a, sizeof a, "%s/a.dat", dir);
    snprintf(b, sizeof b, "%s/b.dat", dir);
    snprintf(c, sizeof c, "%s/c.dat", dir);
    int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "hello", 5) != 5)
        exit(9);
    close(fd);
    if (rename(a, b) != 0 || renameat(AT_FDCWD, b, AT_FDCWD, c) != 0)
        exit(10);
    if (rename(a, c) == 0)                           /* a.dat is gone: fails, not counted */
        exit(11);
}

static void relative_names(const char *dir)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    if (mkdir(sub, 0755) != 0 || chdir(dir) != 0)
        exit(12);
    for (int i = 1; i <= 2; i++) {                   /* DIR/x.dat: 1 byte, DIR/sub/x.dat: 2 */
        int fd = open("x.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "yy", (size_t)i) != i)
            exit(13);
        close(fd);
        if (i == 1 && chdir("sub") != 0)
            exit(14);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    std_streams();
    text_file(argv[1]);
    renames(argv[1]);
    relative_names(argv[1]);
    return 0;
}
