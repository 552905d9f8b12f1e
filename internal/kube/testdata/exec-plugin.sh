#!/bin/sh
# A stand-in for an exec credential plugin (aws eks get-token, kubelogin,
# gke-gcloud-auth-plugin): it prints an ExecCredential with a token, as
# client-go's exec authenticator expects
# (k8s.io/client-go/pkg/apis/clientauthentication/v1 ExecCredential), and
# leaves a mark that it ran. The token is its first argument.
if [ -n "$EXEC_PLUGIN_MARK" ]; then echo ran >> "$EXEC_PLUGIN_MARK"; fi
cat <<JSON
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"$1"}}
JSON
