/** \file
 * CUTEJIT_LOCAL marks a template whose instances are no part of libcutejit's interface: the
 * traced bodies of the kernel library, instantiated wherever they are traced. Hidden, their
 * instances (and the lambdas inside them, thousands in all) stay out of the library's dynamic
 * symbol table; a program that traces one itself gets its own copy, as with any template.
 */
#pragma once

#define CUTEJIT_LOCAL [[gnu::visibility("hidden")]]
