/* The smallest semihosting program: prints a line and exits with 3. */
#include <stdio.h>

int main(void)
{
  printf("hello from the virtual Cortex-M\n");
  return 3;
}
