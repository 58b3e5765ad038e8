// Reads one page from the installed nand_stream platform's flash and checks
// the simulated time against the closed form sense + data-out (the page's data
// and its read's command and status cycles) + consume.
#include <iostream>
#include <systemc>

#include "models/nand/flash_array.h"
#include "models/nand/stream_reader.h"
#include "schema/platform_loader.h"

int sc_main(int, char*[]) {
  using namespace ispsim;
  const std::string file = std::string(ISPSIM_DATA) + "/platforms/nand_stream.textproto";
  const schema::LoadedPlatform loaded = schema::load_platform(file);
  const nand::FlashConfig flash_config = nand::FlashConfig::from_params(loaded.platform.nand());
  const nand::StreamConfig stream_config = nand::StreamConfig::from_params(loaded.platform.stream());
  nand::FlashArray flash("nand", flash_config);
  nand::StreamReader reader("reader", flash, stream_config);
  reader.start({nand::PageAddress{}});
  sc_core::sc_start();

  const sc_core::sc_time took = reader.finished_at() - reader.started_at();
  const sc_core::sc_time data_out = sc_core::sc_time::from_value(flash_config.data_out_ps(/*first_of_sense=*/true));
  const sc_core::sc_time expected = flash_config.t_read + data_out + stream_config.consume_per_page;
  std::cout << "one page: " << took.to_seconds() * 1e9 << " ns (closed form " << expected.to_seconds() * 1e9
            << " ns)\n";
  return took == expected && reader.done() ? 0 : 1;
}
