// polyc check: placeholder until the front end lands.
#include "Commands.h"

int polyc::driver::runCheck() { return 1; }
