#include "residualgap.h"

PetscErrorCode GSResidualGapInit(GSResidualGap *g, const char prefix[])
{
  PetscFunctionBegin;
  g->check    = PETSC_TRUE;
  g->factor   = 10.0;
  g->truenorm = -1;
  g->stalled  = -1;
  PetscCall(PetscStrncpy(g->prefix, prefix, sizeof(g->prefix)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSResidualGapSetFromOptions(GSResidualGap *g, KSP ksp, GSOptionItems PetscOptionsObject)
{
  char      check[64], factor[64];
  PetscReal f;
  PetscBool set;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(check, sizeof(check), "-ksp_%s_check_true_residual", g->prefix));
  PetscCall(PetscSNPrintf(factor, sizeof(factor), "-ksp_%s_residual_gap_factor", g->prefix));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, check, GS_OPTION_BOOL, NULL, 0));
  PetscCall(GSOptionsCheckValue(PetscOptionsObject, (PetscObject)ksp, factor, GS_OPTION_REAL, NULL, 0));
  PetscCall(PetscOptionsBool(check, "Compute the true residual once at convergence and compare it with the recursive one", "KSPSolve", g->check, &g->check, NULL));
  PetscCall(PetscOptionsReal(factor, "Report when the true and recursive residual norms differ by more than this factor", "KSPSolve", g->factor, &f, &set));
  if (set) {
    GSOptionsCheck(PetscOptionsObject, f >= 1, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_OUTOFRANGE, "-%s%s must be at least 1, not %g", GSPrefix((PetscObject)ksp), factor + 1, (double)f);
    g->factor = f;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* True over recursive residual norm (1 when both vanish) */
PetscReal GSResidualGapRatio(const GSResidualGap *g, PetscReal rnorm)
{
  if (g->truenorm <= 0) return 1.0;
  return g->truenorm / PetscMax(rnorm, PETSC_SMALL * g->truenorm);
}

PetscErrorCode GSResidualGapView(const GSResidualGap *g, KSP ksp, PetscViewer viewer)
{
  PetscFunctionBegin;
  if (g->check)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual checked at convergence, reported beyond a factor %g\n", (double)g->factor));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual not checked at convergence\n"));
  if (g->truenorm >= 0) {
    const PetscReal gap = GSResidualGapRatio(g, ksp->rnorm);
    if (gap > g->factor)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual norm at convergence %g, %g times the recursive one: ABOVE THE FACTOR, consider -%sksp_%s_replace_every\n", (double)g->truenorm, (double)gap, GSPrefix((PetscObject)ksp), g->prefix));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual norm at convergence %g, %g times the recursive one\n", (double)g->truenorm, (double)gap));
  }
  if (g->stalled >= 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  stopped at the attainable accuracy: the true residual norm %g stagnated above the tolerance\n", (double)g->stalled));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called after every solve (KSPConvergedReasonViewSet()); speaks under -ksp_converged_reason only when the residuals
   disagree. ctx: the GSResidualGap. */
PetscErrorCode GSResidualGapReasonView(KSP ksp, void *ctx)
{
  const GSResidualGap *g = (const GSResidualGap *)ctx;
  PetscBool            flg;
  KSPType              type;

  PetscFunctionBegin;
  if (g->stalled < 0 && (g->truenorm < 0 || GSResidualGapRatio(g, ksp->rnorm) <= g->factor)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, ((PetscObject)ksp)->prefix, "-ksp_converged_reason", &flg));
  PetscCall(KSPGetType(ksp, &type));
  if (flg && g->stalled >= 0)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)ksp), "KSP %s: stopped at the attainable accuracy: the true residual norm %g stagnated above the tolerance over residual replacements (%s); the recursive one reached %g\n", type,
                          (double)g->stalled, KSPConvergedReasons[ksp->reason], (double)ksp->rnorm));
  else if (flg)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)ksp), "KSP %s: the true residual norm %g is %g times the recursive one at convergence; -%sksp_%s_replace_every N keeps them together\n", type, (double)g->truenorm,
                          (double)GSResidualGapRatio(g, ksp->rnorm), GSPrefix((PetscObject)ksp), g->prefix));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Removes the solver's report from the KSP's reason views (KSPConvergedReasonViewSet() has no single removal): the
   context lives in the solver's data, which a change of KSP type frees */
PetscErrorCode GSResidualGapReasonViewRemove(KSP ksp, const GSResidualGap *gap)
{
  PetscInt k = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < ksp->numberreasonviews; i++) {
    if (ksp->reasonview[i] == GSResidualGapReasonView && ksp->reasonviewcontext[i] == (void *)gap) continue;
    ksp->reasonview[k]        = ksp->reasonview[i];
    ksp->reasonviewdestroy[k] = ksp->reasonviewdestroy[i];
    ksp->reasonviewcontext[k] = ksp->reasonviewcontext[i];
    k++;
  }
  ksp->numberreasonviews = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}
