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
  PetscCall(PetscOptionsReal(factor, "Report when the true and recursive residual norms differ by more than this factor and the true one is above the tolerance", "KSPSolve", g->factor, &f, &set));
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

/* Whether the true norm meets the tolerance the solve stopped at: 1 yes, 0 no, -1 unknown (a convergence test other
   than KSPConvergedDefault(), whose tolerance max(rtol ||r_0||, abstol) is ksp->ttol) */
static int GSResidualGapMet(const GSResidualGap *g, KSP ksp)
{
  if (g->truenorm < 0 || ksp->converged != KSPConvergedDefault) return -1;
  return g->truenorm <= ksp->ttol ? 1 : 0;
}

/* "2.5 times", or "equal to" where the ratio prints as 1 */
static PetscErrorCode GSResidualGapRatioText(PetscReal gap, char text[], size_t len)
{
  PetscFunctionBegin;
  if (GSNounReal(gap, 6, "", "s")[0])
    PetscCall(PetscSNPrintf(text, len, "%.6g times", (double)gap));
  else
    PetscCall(PetscStrncpy(text, "equal to", len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GSResidualGapView(const GSResidualGap *g, KSP ksp, PetscViewer viewer)
{
  PetscFunctionBegin;
  if (g->check)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual checked at convergence, reported beyond a factor %.6g unless it meets the tolerance\n", (double)g->factor));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual not checked at convergence\n"));
  if (g->truenorm >= 0) {
    const PetscReal gap = GSResidualGapRatio(g, ksp->rnorm);
    const int       met = GSResidualGapMet(g, ksp);
    char            ratio[64];
    PetscCall(GSResidualGapRatioText(gap, ratio, sizeof(ratio)));
    if (gap <= g->factor)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual norm at convergence %.6g, %s the recursive one\n", (double)g->truenorm, ratio));
    else if (met == 1)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual norm at convergence %.6g, %s the recursive one, below the tolerance %.6g\n", (double)g->truenorm, ratio, (double)ksp->ttol));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residual norm at convergence %.6g, %s the recursive one: ABOVE THE FACTOR, consider -%sksp_%s_replace_every\n", (double)g->truenorm, ratio, GSPrefix((PetscObject)ksp), g->prefix));
  }
  if (g->stalled >= 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  stopped at the attainable accuracy: the true residual norm %.6g stagnated above the tolerance\n", (double)g->stalled));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called after every solve (KSPConvergedReasonViewSet()); speaks under -ksp_converged_reason only when the residuals
   disagree and the true one does not meet the tolerance (or the convergence test is not PETSc's default, whose
   tolerance it knows). ctx: the GSResidualGap. */
PetscErrorCode GSResidualGapReasonView(KSP ksp, void *ctx)
{
  const GSResidualGap *g = (const GSResidualGap *)ctx;
  PetscBool            flg;
  KSPType              type;
  char                 ratio[64];

  PetscFunctionBegin;
  if (g->stalled < 0 && (g->truenorm < 0 || GSResidualGapRatio(g, ksp->rnorm) <= g->factor || GSResidualGapMet(g, ksp) == 1)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, ((PetscObject)ksp)->prefix, "-ksp_converged_reason", &flg));
  PetscCall(KSPGetType(ksp, &type));
  if (flg && g->stalled >= 0)
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)ksp), "KSP %s: stopped at the attainable accuracy: the true residual norm %.6g stagnated above the tolerance over residual replacements (%s); the recursive one reached %.6g\n", type,
                          (double)g->stalled, KSPConvergedReasons[ksp->reason], (double)ksp->rnorm));
  else if (flg) {
    PetscCall(GSResidualGapRatioText(GSResidualGapRatio(g, ksp->rnorm), ratio, sizeof(ratio)));
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)ksp), "KSP %s: the true residual norm %.6g is %s the recursive one at convergence; -%sksp_%s_replace_every N keeps them together\n", type, (double)g->truenorm, ratio, GSPrefix((PetscObject)ksp),
                          g->prefix));
  }
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

/* The line of a solver's view on the copies between host and device of its last solve, where there were some */
PetscErrorCode GSHostCopiesView(PetscViewer viewer, PetscInt copies)
{
  PetscFunctionBegin;
  if (copies > 0)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %" PetscInt_FMT " host-device %s in all (b, x and a host preconditioner's vectors; -log_view's CpuToGpu and GpuToCpu)\n", copies, GSNoun(copies, "vector copy", "vector copies")));
  PetscFunctionReturn(PETSC_SUCCESS);
}
