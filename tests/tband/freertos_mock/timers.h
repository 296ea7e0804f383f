/* part of the FreeRTOS stand-in: everything is in FreeRTOS.h */
#include "FreeRTOS.h"
