// Serial C++ I/O as applications write it: std::fstream / std::ofstream / std::ifstream
// (libstdc++ opens with fopen, then moves the bytes with read/write/lseek on the stream's
// descriptor, calling fileno() each time).
//   DIR/cxx_rw.dat (binary fstream): 64 writes of 4096 B, seekg(0), 64 reads back
//   DIR/cxx_text.txt (text fstream, open meanwhile): 1000 lines "i value" written with <<,
//       seekg(0), read back with >>
//   DIR/cxx_again.dat, while both are open: an ofstream of 16 x 4096 B, closed, then an
//       ifstream reading them back (a new descriptor for a file whose record exists)
// Both fstreams close last. Usage: cxx_streams DIR
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr std::streamsize kBlock = 4096;

bool write_blocks(std::ostream &out, int n, std::vector<char> &block)
{
    for (int b = 0; b < n; b++) {
        block.assign(block.size(), static_cast<char>(b));
        out.write(block.data(), kBlock);
    }
    return static_cast<bool>(out);
}

bool read_blocks(std::istream &in, int n, std::vector<char> &block)
{
    for (int b = 0; b < n; b++)
        if (!in.read(block.data(), kBlock) || block[kBlock - 1] != static_cast<char>(b))
            return false;
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    const std::string dir = argv[1];
    const auto rw = std::ios::in | std::ios::out | std::ios::trunc;
    std::vector<char> block(kBlock);
    std::fstream bin(dir + "/cxx_rw.dat", rw | std::ios::binary);
    std::fstream text(dir + "/cxx_text.txt", rw);
    if (!write_blocks(bin, 64, block))
        return 2;
    for (int i = 0; i < 1000; i++)
        text << i << ' ' << i * 0.25 << '\n';
    {
        std::ofstream out(dir + "/cxx_again.dat", std::ios::binary);
        if (!write_blocks(out, 16, block))
            return 3;
    }
    {
        std::ifstream in(dir + "/cxx_again.dat", std::ios::binary);
        if (!read_blocks(in, 16, block))
            return 4;
    }
    bin.seekg(0);
    if (!read_blocks(bin, 64, block))
        return 5;
    text.seekg(0);
    int i = 0, n = 0;
    double v = 0;
    while (text >> i >> v)
        if (i != n++ || v != i * 0.25)
            return 6;
    return n == 1000 ? EXIT_SUCCESS : 7;
}
