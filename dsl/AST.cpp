// Spellings of the AST's enumerations and the Program's lookups.
#include "dsl/AST.h"
