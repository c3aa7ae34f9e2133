// A right-way include: the estimators may include core (never compiled).
#include "core/model.hpp"
