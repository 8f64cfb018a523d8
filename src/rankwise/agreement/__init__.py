"""Agreement between judges: ``label_agreement(qrels_a, qrels_b)`` (Cohen's kappa, Krippendorff's
alpha, binary agreement at each level, with bootstrap intervals over queries) and
``system_agreement(qrels_a, qrels_b, runs)`` (Kendall's tau, tau_AP, Spearman, top-k overlap).

>>> from rankwise.agreement import label_agreement
>>> label_agreement({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "b": 0}}, resamples=0).statistics["kappa_unweighted"]
1.0
"""

from rankwise.agreement.labels import LabelAgreement, cohen_kappa, krippendorff_alpha, label_agreement
from rankwise.agreement.systems import SystemAgreement, system_agreement, tau_ap

__all__ = ["LabelAgreement", "SystemAgreement", "cohen_kappa", "krippendorff_alpha", "label_agreement",
           "system_agreement", "tau_ap"]
