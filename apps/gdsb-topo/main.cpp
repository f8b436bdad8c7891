#include "topo_app.hpp"

int main(int argc, char** argv) { return gdsb::topo_app::topo_main(argc, argv); }
