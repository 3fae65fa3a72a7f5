{{/* The release name is the name of every object (tritonfleet pins it per deployment). */}}
{{- define "triton.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "triton.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "triton.labels" -}}
{{ include "triton.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Checks values.schema.json cannot express (relations between values). */}}
{{- define "triton.validate" -}}
{{- if lt (int .Values.replicas.max) (int .Values.replicas.min) -}}
{{- fail (printf "replicas.max (%d) must be >= replicas.min (%d)" (int .Values.replicas.max) (int .Values.replicas.min)) -}}
{{- end -}}
{{- $s := .Values.shutdown -}}
{{- if ge (add (int $s.preStopSeconds) (int $s.exitTimeoutSeconds)) (int $s.terminationGracePeriodSeconds) -}}
{{- fail (printf "shutdown: preStopSeconds (%d) + exitTimeoutSeconds (%d) must be below terminationGracePeriodSeconds (%d), or Triton is killed mid-drain" (int $s.preStopSeconds) (int $s.exitTimeoutSeconds) (int $s.terminationGracePeriodSeconds)) -}}
{{- end -}}
{{- if and .Values.spotNoticeSeconds (gt (int $s.terminationGracePeriodSeconds) (int .Values.spotNoticeSeconds)) -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must fit inside the spot notice (spotNoticeSeconds %d)" (int $s.terminationGracePeriodSeconds) (int .Values.spotNoticeSeconds)) -}}
{{- end -}}
{{- if and .Values.loadModels (ne .Values.modelControlMode "explicit") -}}
{{- fail "loadModels needs modelControlMode explicit" -}}
{{- end -}}
{{- if and .Values.restrictedApis.groups (not .Values.restrictedApis.secretName) -}}
{{- fail "restrictedApis.groups need restrictedApis.secretName: the Secret that holds their keys" -}}
{{- end -}}
{{- if and .Values.modelState.enabled (eq (int .Values.controlProxy.port) (int .Values.modelState.port)) -}}
{{- fail (printf "controlProxy.port and modelState.port are both %d: each needs its own port" (int .Values.modelState.port)) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range .Values.restrictedApis.groups -}}
{{- range .apis -}}
{{- if hasKey $seen . -}}
{{- fail (printf "restrictedApis: API %s is in two groups; Triton allows each API in one group only" .) -}}
{{- end -}}
{{- $_ := set $seen . true -}}
{{- end -}}
{{- end -}}
{{- if .Values.openaiFrontend.enabled -}}
{{- $o := .Values -}}
{{- $conflicts := list -}}
{{- if eq $o.modelControlMode "poll" }}{{ $conflicts = append $conflicts "modelControlMode poll (the frontend runs none or explicit)" }}{{ end -}}
{{- if or $o.ingress.enabled $o.gateway.enabled $o.scaleToZero.enabled }}{{ $conflicts = append $conflicts "ingress, gateway or scaleToZero (they route to the KServe HTTP port, loopback-only here)" }}{{ end -}}
{{- if or $o.modelConfigName $o.tuningArgs $o.extraArgs }}{{ $conflicts = append $conflicts "modelConfigName, tuningArgs or extraArgs (tritonserver flags the in-process server does not take)" }}{{ end -}}
{{- if $conflicts -}}
{{- fail (printf "openaiFrontend.enabled excludes %s" (join "; " $conflicts)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.modelCache.enabled (not (and .Values.modelCache.hostPath .Values.modelCache.view)) -}}
{{- fail "modelCache.enabled needs modelCache.hostPath (the node folder) and modelCache.view (this release's view)" -}}
{{- end -}}
{{- if and .Values.scaleToZero.enabled .Values.rollout.enabled -}}
{{- fail "scaleToZero.enabled and rollout.enabled exclude each other: a canary split needs running replicas" -}}
{{- end -}}
{{- $ingress := .Values.ingress -}}
{{- if and $ingress.enabled (not $ingress.hostname) -}}
{{- fail "ingress.enabled needs ingress.hostname" -}}
{{- end -}}
{{- if and $ingress.enabled (not $ingress.tlsSecretName) (not (and $ingress.certificateAnnotation (hasKey $ingress.annotations $ingress.certificateAnnotation))) -}}
{{- fail "ingress.enabled needs TLS: ingress.tlsSecretName, or ingress.certificateAnnotation naming an annotation that is set" -}}
{{- end -}}
{{- end -}}

{{/* The HPA's scaling behaviour: the chart's own HPA and KEDA's (scaledobject.yaml) scale alike. */}}
{{- define "triton.hpaBehavior" -}}
scaleUp:
  # Fast: double or add scaleUp.pods per period, whichever is more, with no stabilisation window.
  stabilizationWindowSeconds: 0
  selectPolicy: Max
  policies:
    - type: Percent
      value: {{ $.Values.autoscaling.scaleUp.percent }}
      periodSeconds: {{ $.Values.autoscaling.scaleUp.periodSeconds }}
    - type: Pods
      value: {{ $.Values.autoscaling.scaleUp.pods }}
      periodSeconds: {{ $.Values.autoscaling.scaleUp.periodSeconds }}
scaleDown:
  # Stabilised: the highest recommendation of the window wins, then at most scaleDown.percent per period.
  stabilizationWindowSeconds: {{ $.Values.autoscaling.scaleDown.stabilizationSeconds }}
  selectPolicy: Max
  policies:
    - type: Percent
      value: {{ $.Values.autoscaling.scaleDown.percent }}
      periodSeconds: {{ $.Values.autoscaling.scaleDown.periodSeconds }}
{{- end -}}
