<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AccessActions</name>
    <message>
        <source>Opened {what}.</source>
        <translation>已打开 {what}。</translation>
    </message>
    <message>
        <source>Open in VS Code</source>
        <translation>在 VS Code 中打开</translation>
    </message>
    <message>
        <source>Folder on {host} to open in VS Code (Remote - SSH):</source>
        <translation>{host} 上要用 VS Code（Remote - SSH）打开的文件夹：</translation>
    </message>
    <message>
        <source>The {name} tunnel to {host} is still closing; start it again in a moment.</source>
        <translation>到 {host} 的 {name} 隧道仍在关闭中；请稍后再启动。</translation>
    </message>
    <message>
        <source>Tunnel {name} on {host}: {url} {note}</source>
        <translation>{host} 上的 {name} 隧道：{url} {note}</translation>
    </message>
    <message>
        <source>Tunnel {name} on {host}: {url}</source>
        <translation>{host} 上的 {name} 隧道：{url}</translation>
    </message>
    <message>
        <source>Unexpected error: {error}</source>
        <translation>意外错误：{error}</translation>
    </message>
    <message>
        <source>The {name} tunnel to {host} did not start: {error}</source>
        <translation>到 {host} 的 {name} 隧道未能启动：{error}</translation>
    </message>
    <message>
        <source>Tunnel {name} on {host} closed.</source>
        <translation>{host} 上的 {name} 隧道已关闭。</translation>
    </message>
    <message>
        <source>The {name} tunnel to {host} did not close cleanly: {error}</source>
        <translation>到 {host} 的 {name} 隧道未能正常关闭：{error}</translation>
    </message>
    <message>
        <source>No web browser opened for {url}: copy the address into a browser.</source>
        <translation>没有浏览器打开 {url}：请把地址复制到浏览器中。</translation>
    </message>
</context>
<context>
    <name>AccessMenu</name>
    <message>
        <source>Nothing to open on this computer</source>
        <translation>本机没有可打开的内容</translation>
    </message>
    <message>
        <source>Open terminal</source>
        <translation>打开终端</translation>
    </message>
    <message>
        <source>Open terminal in tmux “{session}”</source>
        <translation>在 tmux 会话“{session}”中打开终端</translation>
    </message>
    <message>
        <source>Open in VS Code…</source>
        <translation>在 VS Code 中打开…</translation>
    </message>
    <message>
        <source>{name}: tunnel closing…</source>
        <translation>{name}：隧道关闭中…</translation>
    </message>
    <message>
        <source>{name}: tunnel up on 127.0.0.1:{local}, nothing answers on {remote} yet</source>
        <translation>{name}：隧道已在 127.0.0.1:{local} 建立，{remote} 端口暂无响应</translation>
    </message>
    <message>
        <source>Open {name} in browser (127.0.0.1:{local})</source>
        <translation>在浏览器中打开 {name}（127.0.0.1:{local}）</translation>
    </message>
    <message>
        <source>Tunnel {tunnel}</source>
        <translation>建立隧道 {tunnel}</translation>
    </message>
    <message>
        <source>Tunnels…</source>
        <translation>隧道…</translation>
    </message>
</context>
<context>
    <name>Banner</name>
    <message>
        <source>Dismiss</source>
        <translation>忽略</translation>
    </message>
</context>
<context>
    <name>HostConnection</name>
    <message>
        <source>New host key</source>
        <translation>新的主机密钥</translation>
    </message>
    <message>
        <source>First connection to {alias} ({hostname}:{port}).

Its host key fingerprint is:
{fingerprint}

Compare it with the one your provider shows for this instance (console or boot log). Trust it only if they match.</source>
        <translation>首次连接 {alias}（{hostname}:{port}）。

它的主机密钥指纹是：
{fingerprint}

请与平台为该实例显示的指纹（控制台或启动日志）核对，一致时才信任。</translation>
    </message>
    <message>
        <source>Trust and connect</source>
        <translation>信任并连接</translation>
    </message>
    <message>
        <source>Host key changed</source>
        <translation>主机密钥已变更</translation>
    </message>
    <message>
        <source>{message}

Trusted before: {known}
Offered now: {offered}

{hint}</source>
        <translation>{message}

之前信任的：{known}
现在提供的：{offered}

{hint}</translation>
    </message>
    <message>
        <source>This is a new instance…</source>
        <translation>这是新实例…</translation>
    </message>
    <message>
        <source>Replace the trusted host key?</source>
        <translation>替换已信任的主机密钥？</translation>
    </message>
    <message>
        <source>Forget the old key of {alias} and trust {fingerprint}?

Only do this if you created, restarted or re-rented this instance just now.</source>
        <translation>忘记 {alias} 的旧密钥并信任 {fingerprint}？

仅当你刚刚创建、重启或重新租用了该实例时才这样做。</translation>
    </message>
    <message>
        <source>Replace the key</source>
        <translation>替换密钥</translation>
    </message>
</context>
<context>
    <name>NoBrowserDialog</name>
    <message>
        <source>No web browser opened</source>
        <translation>未能打开浏览器</translation>
    </message>
    <message>
        <source>The system did not open a web browser: no default browser seems to be set. Copy the address below into a browser, or set a default web browser in your desktop&apos;s settings (on Linux for example &lt;code&gt;xdg-settings set default-web-browser firefox.desktop&lt;/code&gt;) and try again.</source>
        <translation>系统没有打开网页浏览器：似乎没有设置默认浏览器。请把下面的地址复制到浏览器中，或在桌面环境的设置中指定默认浏览器（例如在 Linux 上运行 &lt;code&gt;xdg-settings set default-web-browser firefox.desktop&lt;/code&gt;），然后重试。</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>SelfCheckDialog</name>
    <message>
        <source>Self-check — {host}</source>
        <translation>自检 — {host}</translation>
    </message>
    <message>
        <source>Checks the GPU, the driver against PyTorch, a matmul and its BF16 speed, the data disk, Python and pip — over one SSH command, in about a minute.</source>
        <translation>检查 GPU、驱动与 PyTorch 是否匹配、一次矩阵乘法及其 BF16 速度、数据盘、Python 和 pip —— 只用一条 SSH 命令，约一分钟完成。</translation>
    </message>
    <message>
        <source>Run again</source>
        <translation>重新运行</translation>
    </message>
</context>
<context>
    <name>SelfCheckView</name>
    <message>
        <source>✔ pass</source>
        <translation>✔ 通过</translation>
    </message>
    <message>
        <source>▲ warn</source>
        <translation>▲ 警告</translation>
    </message>
    <message>
        <source>✖ fail</source>
        <translation>✖ 失败</translation>
    </message>
    <message>
        <source>– skip</source>
        <translation>– 跳过</translation>
    </message>
    <message>
        <source>Not run yet.</source>
        <translation>尚未运行。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stopping the earlier check…</source>
        <translation>正在停止之前的检查…</translation>
    </message>
    <message>
        <source>Checking {host} ({user}@{address}:{port})…</source>
        <translation>正在检查 {host}（{user}@{address}:{port}）…</translation>
    </message>
    <message>
        <source>Cancelling after the current step…</source>
        <translation>当前步骤完成后取消…</translation>
    </message>
    <message>
        <source>Fix: {hint}</source>
        <translation>修复：{hint}</translation>
    </message>
    <message>
        <source>The self-check stopped: {error}</source>
        <translation>自检已停止：{error}</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>{passed} passed, {warnings} warnings, {failed} failed, {skipped} skipped. Fix first: {names}.</source>
        <translation>{passed} 项通过，{warnings} 项警告，{failed} 项失败，{skipped} 项跳过。请先修复：{names}。</translation>
    </message>
    <message>
        <source>{passed} passed, {warnings} warnings, {failed} failed, {skipped} skipped.</source>
        <translation>{passed} 项通过，{warnings} 项警告，{failed} 项失败，{skipped} 项跳过。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
</context>
</TS>
