# The main job: scripts/demo (`make demo`) runs and its SWO profile agrees with
# its ground truth.
if(SONDE_FIRMWARE)
  sonde_cli_test(demo LABELS firmware)
endif()
