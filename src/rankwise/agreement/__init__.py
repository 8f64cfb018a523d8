"""Agreement between judges: ``label_agreement(qrels_a, qrels_b)`` (Cohen's kappa, Krippendorff's
alpha, binary agreement at each level, with bootstrap intervals over queries) and
``system_agreement(qrels_a, qrels_b, runs)`` (Kendall's tau, tau_AP, Spearman, top-k overlap);
``qpp_correlations(predicted, actual)`` for query performance predictors;
``offline_online(experiments)``: does an offline metric's change predict the online one?

>>> from rankwise.agreement import label_agreement
>>> label_agreement({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "b": 0}}, resamples=0).statistics["kappa_unweighted"]
1.0
"""

from rankwise.agreement.labels import LabelAgreement, cohen_kappa, krippendorff_alpha, label_agreement
from rankwise.agreement.offline_online import OfflineOnline, offline_online
from rankwise.agreement.qpp import qpp_correlations, smare
from rankwise.agreement.systems import SystemAgreement, system_agreement, tau_ap

__all__ = ["LabelAgreement", "OfflineOnline", "SystemAgreement", "cohen_kappa", "krippendorff_alpha",
           "label_agreement", "offline_online", "qpp_correlations", "smare", "system_agreement", "tau_ap"]
